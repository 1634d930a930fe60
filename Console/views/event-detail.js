// The detail of one event (or the list of a group's events) beside the timeline.
import { h, replace } from '../dom.js';
import { STATUSES, SOURCE_WORDS, shortTime, text, time, verificationWords } from '../format.js';
import { jsonView, bodyView } from '../json-view.js';
import * as session from '../session.js';

/** Shows `events` in `panel`: one event's detail, or a list to choose from. */
export function showEvents(panel, events, { conflicts, onAsOf, returnFocus }) {
  if (events.length === 1) return showEvent(panel, events[0], { conflicts, onAsOf, returnFocus });
  const list = h('ol', { class: 'group-list' }, events.map((e) => h('li', {},
    h('button', { type: 'button', class: 'link', onclick: () => showEvent(panel, e, { conflicts, onAsOf, returnFocus, back: () => showEvents(panel, events, { conflicts, onAsOf, returnFocus }) }) },
      `#${e.position} ${e.type} · ${shortTime(e.observedAt)} · ${STATUSES[e.statusAfter]}${conflicts.has(e.position) ? ' · conflict' : ''}${e.redeliveries ? ` · delivered ×${e.redeliveries + 1}` : ''}`))));
  replace(panel, h('h2', { tabindex: -1, id: 'detail-heading' }, `${events.length} events close together`),
    h('p', { class: 'help' }, 'Choose one to see its detail, or zoom the picture in to separate them.'), list, closeButton(panel, returnFocus));
  panel.hidden = false;
  panel.querySelector('h2').focus();
}

function showEvent(panel, e, { conflicts, onAsOf, returnFocus, back }) {
  const lag = Date.parse(e.recordedAt) - Date.parse(e.observedAt);
  const differ = Math.abs(lag);
  const rows = [
    ['Type', e.type], ['Source', `${SOURCE_WORDS[e.source] || e.source} (${e.source})`], ['Provider', text(e.provider)],
    ['Observed at', time(e.observedAt)],
    ['Recorded at', [time(e.recordedAt), differ >= 1000 ? ` (${Math.round(differ / 1000)} s ${lag >= 0 ? 'after' : 'before'} the time it was observed at)` : '']],
    ['Status after', `${STATUSES[e.statusAfter]} (${e.statusAfter})`],
    ['Verification', [verificationWords(e), e.verifiedBy ? h('code', {}, ` ${e.verifiedBy}`) : '']],
    ['Redeliveries', e.redeliveries ? `${e.redeliveries}: the same delivery came ${e.redeliveries} more time(s) and was stored once` : 'none'],
    ['Position', `#${e.position}`], ['Event id', h('code', {}, e.eventId)],
  ];
  if (conflicts.has(e.position)) rows.push(['Conflict', h('strong', { class: 'conflict-text' }, 'this event conflicts with the order\'s state (see Conflicts above)')]);
  if (e.hash) rows.push(['Hash', h('code', {}, e.hash)]);
  replace(panel,
    back ? h('button', { type: 'button', class: 'link', onclick: back }, '← the group\'s events') : null,
    h('h2', { tabindex: -1, id: 'detail-heading' }, `Event #${e.position}: ${e.type}`),
    h('dl', { class: 'fields', id: 'event-fields' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('button', { type: 'button', id: 'as-of-event', onclick: () => onAsOf(e.recordedAt) }, 'Show the order as of this event'),
    h('h3', {}, 'Parsed payload'),
    jsonView(e.payload, { id: 'event-payload' }),
    session.isAuditor()
      ? [h('h3', {}, 'Raw body (as received)'),
        e.raw ? bodyView(e.raw, 'event-raw') : h('p', { class: 'help' }, 'No raw body: this event was not a delivery of bytes (a registration or a correction).'),
        e.metadata ? [h('h3', {}, 'Metadata'), jsonView(e.metadata, { id: 'event-metadata' })] : null]
      : h('p', { class: 'help' }, 'Raw bodies are for auditors; support sees the parsed payload.'),
    closeButton(panel, returnFocus));
  panel.hidden = false;
  panel.querySelector('h2').focus();
}

function closeButton(panel, returnFocus) {
  return h('p', {}, h('button', {
    type: 'button', class: 'small', id: 'close-detail',
    onclick: () => { panel.hidden = true; if (returnFocus && returnFocus.isConnected) returnFocus.focus(); },
  }, 'Close'));
}

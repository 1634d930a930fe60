// The order page (/console/orders/{no}): the header, conflicts and the last client signal in
// words, the timeline picture with its event detail, the as-of control, and for auditors the
// correction form and the raw events. The time to draw it once the data is in is kept in
// data-render-ms on #order-page.
import { h, replace } from '../dom.js';
import { api, seg } from '../api.js';
import {
  amount, clientSignalWords, conflictWords, statusBadge, text, time, timeMicros, yesNo, shortTime,
} from '../format.js';
import * as session from '../session.js';
import { jsonView } from '../json-view.js';
import { drawTimeline } from './timeline.js';
import { showEvents } from './event-detail.js';
import { correctionForm } from './correction.js';
import { loading, failed } from './states.js';

export async function renderOrder(page, no) {
  const asOf = new URLSearchParams(location.search).get('asOf');
  loading(page, `order ${no}`);
  let order, timeline;
  try {
    [order, timeline] = await Promise.all([
      api(`/v1/orders/${seg(no)}` + (asOf ? `?asOf=${encodeURIComponent(asOf)}` : '')),
      api(`/v1/orders/${seg(no)}/events`),
    ]);
  } catch (error) {
    if (!page.isConnected) return;
    if (error.status === 404) return notFound(page, no, asOf);
    return failed(page, error);
  }
  if (!page.isConnected) return;
  draw(page, no, asOf, order, timeline);
}

function notFound(page, no, asOf) {
  replace(page, h('section', { class: 'error', role: 'alert', id: 'order-not-found', 'data-status': 404 },
    h('h2', {}, asOf ? `Order ${no} was not known yet` : `No order ${no}`),
    h('p', {}, asOf
      ? `The ledger had recorded nothing for order ${no} by ${shortTime(asOf)}.`
      : `The ledger knows no order with the number ${no}. Check the number, or search by the provider's order id, the tx hash or the customer id.`),
    h('p', {}, asOf ? h('a', { href: `/console/orders/${encodeURIComponent(no)}`, 'data-link': true }, 'Show it as it is now') : null, ' ',
      h('a', { href: '/console/', 'data-link': true }, 'Back to search'))));
}

function setAsOf(no, value) {
  const path = `/console/orders/${encodeURIComponent(no)}` + (value ? `?asOf=${encodeURIComponent(value)}` : '');
  history.pushState(null, '', path);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

function draw(page, no, asOf, order, timeline) {
  const started = performance.now();
  // The events asOf folds: those recorded at or before it.
  const cutoff = asOf ? timeMicros(asOf) : Infinity;
  const events = timeline.events.filter((e) => timeMicros(e.recordedAt) <= cutoff);
  const hidden = timeline.events.length - events.length;
  const conflicts = new Set((order.conflicts || []).map((c) => c.position));
  const panel = h('aside', { class: 'detail', id: 'event-detail', hidden: true, 'aria-live': 'polite' });
  const picture = h('div', { class: 'picture', id: 'timeline-box' });
  let zoom = 1;
  const redraw = () => {
    const width = Math.max(640, Math.floor((picture.clientWidth || 960) - 2)) * zoom;
    const onOpen = (chosen, mark) => showEvents(panel, chosen, { conflicts, returnFocus: mark, onAsOf: (t) => setAsOf(no, t) });
    picture.replaceChildren(events.length
      ? drawTimeline(events, { width, conflicts, onOpen })
      : h('p', { class: 'empty' }, 'No event was recorded by then.'));
    zoomLabel.textContent = `zoom ×${zoom}`;
  };
  const zoomLabel = h('span', { class: 'help', id: 'zoom-level' });
  const zoomBar = h('div', { class: 'zoom', role: 'toolbar', 'aria-label': 'Zoom the timeline' },
    h('button', { type: 'button', id: 'zoom-in', onclick: () => { zoom = Math.min(64, zoom * 4); redraw(); } }, 'Zoom in'),
    h('button', { type: 'button', id: 'zoom-out', onclick: () => { zoom = Math.max(1, zoom / 4); redraw(); } }, 'Zoom out'),
    zoomLabel);

  const section = h('section', { class: 'page order-page', id: 'order-page', 'data-order': no },
    h('p', { class: 'crumbs' }, h('a', { href: '/console/', 'data-link': true }, '← Search')),
    header(order, asOf, hidden),
    asOfControl(no, asOf),
    problems(order),
    h('section', { class: 'timeline-section', 'aria-labelledby': 'timeline-heading' },
      h('h2', { id: 'timeline-heading' }, `Timeline · ${events.length} event${events.length === 1 ? '' : 's'}`),
      legend(), zoomBar, picture, panel),
    session.isAuditor() ? [correctionForm(no, order.status, () => setAsOf(no, null)), rawEvents(timeline)] : null);
  replace(page, section);
  redraw();
  section.getBoundingClientRect();   // style and layout are part of the render
  section.dataset.renderMs = (performance.now() - started).toFixed(1);
}

function header(o, asOf, hidden) {
  const f = (label, value, id) => [h('dt', {}, label), h('dd', id ? { id } : {}, value)];
  return h('header', { class: 'order-header', id: 'order-header' },
    h('h1', {}, `Order ${o.merchantOrderNo} `, h('span', { id: 'order-status' }, statusBadge(o.status, o.statusName))),
    asOf ? h('p', { class: 'as-of-note', id: 'as-of-note', role: 'status' },
      `As the ledger knew it at ${shortTime(asOf)}` + (hidden ? ` (${hidden} later event${hidden === 1 ? '' : 's'} not shown)` : '') + '.') : null,
    h('dl', { class: 'fields header-fields' },
      f('Status', `${o.statusName} (${o.status})`, 'field-status'),
      f('Paid', yesNo(o.paid, 'paid', 'not paid'), 'field-paid'),
      f('Attention', o.attention ? h('span', { class: 'mark mark-attention' }, '⚠ needs attention') : 'no', 'field-attention'),
      f('Late payment', o.latePayment ? h('span', { class: 'mark mark-attention' }, 'yes: paid after it expired') : 'no'),
      f('Refunded', o.refunded ? `yes${o.refundAmount ? `: ${o.refundAmount} ${o.refundAsset || ''}` : ''}` : 'no'),
      f('Expected', amount(o.expectedAmount, o.asset)),
      f('Paid amount', amount(o.paidAmount, o.asset)),
      o.fiatAmount ? f('Fiat', amount(o.fiatAmount, o.fiatCurrency)) : null,
      f('Provider', text(o.provider)),
      f('Provider order id', text(o.providerOrderId), 'field-provider-order-id'),
      f('Tx hash', h('code', {}, text(o.txHash)), 'field-tx-hash'),
      f('Customer', text(o.externalCustomerId), 'field-customer'),
      f('Created', time(o.createdAt)), f('Paid at', time(o.paidAt)), f('Updated', time(o.updatedAt)),
      f('Events', `${o.eventCount} (last at position #${o.lastPosition ?? '—'})`)));
}

function asOfControl(no, asOf) {
  const input = h('input', { id: 'as-of', name: 'asOf', type: 'text', value: asOf || '', placeholder: '2026-11-01T12:00:00Z', spellcheck: 'false',
    'aria-describedby': 'as-of-help' });
  const form = h('form', { class: 'as-of', id: 'as-of-form' },
    h('label', { for: 'as-of' }, 'As of'), input,
    h('button', { type: 'submit', id: 'as-of-show' }, 'Show'),
    asOf ? h('button', { type: 'button', id: 'as-of-now', onclick: () => setAsOf(no, null) }, 'Back to now') : null,
    h('span', { class: 'help', id: 'as-of-help' }, 'A date (00:00 UTC) or an RFC 3339 time with its offset, such as 2026-11-01T12:00:00Z: the order as the ledger knew it then. An event\'s detail has a button for its own time.'));
  // A message left on the box would keep the browser from submitting the form again.
  input.addEventListener('input', () => input.setCustomValidity(''));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    if (value && Number.isNaN(timeMicros(value))) { input.setCustomValidity('Not a time: a date, or a time with its offset such as 2026-11-01T12:00:00Z'); input.reportValidity(); return; }
    input.setCustomValidity('');
    setAsOf(no, value || null);
  });
  return form;
}

function problems(o) {
  const conflicts = o.conflicts || [];
  const signal = o.lastClientSignal;
  return h('section', { class: 'problems', 'aria-label': 'Conflicts and the last client signal' },
    h('h2', {}, 'Conflicts'),
    conflicts.length
      ? h('ul', { id: 'conflicts' }, conflicts.map((c) => h('li', { class: 'conflict-text' }, conflictWords(c))))
      : h('p', { id: 'conflicts', class: 'help' }, 'None: every source agrees with the status.'),
    h('h2', {}, 'Last client signal'),
    signal
      ? h('div', { id: 'client-signal' }, h('p', {}, clientSignalWords(signal)), jsonView(signal.payload, { id: 'client-signal-payload' }))
      : h('p', { id: 'client-signal', class: 'help' }, 'None: the customer\'s app has not reported anything for this order.'));
}

function legend() {
  return h('p', { class: 'legend help' },
    'Each dot is an event at its observed time, in the lane of its source; a dashed line ends in a tick at its recorded time when the two differ by a second or more. ',
    'The band along the top is the status after each event, over recorded time. ',
    h('span', { class: 'legend-conflict' }, 'Red ring'), ': a conflict. ',
    h('span', { class: 'legend-redelivery' }, '×N'), ': a delivery that came N times. Numbers: events too close to tell apart; zoom in or open them.');
}

function rawEvents(timeline) {
  const box = h('div', { id: 'raw-events-box' });
  const show = h('button', { type: 'button', id: 'raw-events' }, 'Show the raw events (JSON)');
  show.addEventListener('click', () => {
    const text = JSON.stringify(timeline, null, 2);
    const link = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/json' })), download: `${timeline.merchantOrderNo}-events.json` }, 'Download them');
    replace(box, h('p', {}, `GET /v1/orders/${timeline.merchantOrderNo}/events, as this auditor token reads it, raw bodies in base64. `, link),
      h('pre', { class: 'json raw', id: 'raw-events-json' }, text));
  });
  return h('section', { class: 'raw-section' }, h('h2', {}, 'Raw events'), show, box);
}

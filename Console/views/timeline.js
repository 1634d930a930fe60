// The timeline picture (console.md): an SVG built with createElementNS, one lane per source,
// each event a mark at its observed time, a tick at its recorded time where the two differ,
// and the status after each event as a band along the top. Events too close to tell apart
// in a lane are drawn as one group mark with a count; zooming widens the picture.
import { s } from '../dom.js';
import { STATUSES, SOURCE_WORDS, shortTime } from '../format.js';

/** Lane names short enough for the gutter; the detail uses SOURCE_WORDS. */
const LANE_LABELS = { webhook: 'webhook', query: 'query', operator: 'operator', client: 'client (SDK)' };

export const LANES = ['webhook', 'query', 'operator', 'client'];
const LEFT = 110, RIGHT = 24, BAND_Y = 6, BAND_H = 24, LANE_TOP = 44, LANE_H = 46, AXIS_H = 34;
/** Marks closer than this (px) in one lane become one group. */
const GROUP_PX = 16;
/** Observed and recorded times "differ" when they are at least this far apart. */
const DIFFER_MS = 1000;

/**
 * `events`: the timeline's events (oldest first); `conflicts`: positions of conflicting events;
 * `onOpen(events, mark)`: a mark was chosen (click, Enter or Space).
 */
export function drawTimeline(events, { width, conflicts = new Set(), onOpen }) {
  const height = LANE_TOP + LANES.length * LANE_H + AXIS_H;
  const times = events.flatMap((e) => [Date.parse(e.observedAt), Date.parse(e.recordedAt)]);
  let t0 = Math.min(...times), t1 = Math.max(...times);
  if (!(t1 > t0)) { t0 -= 60_000; t1 += 60_000; }
  const pad = (t1 - t0) * 0.02;
  t0 -= pad; t1 += pad;
  const x = (t) => LEFT + ((t - t0) / (t1 - t0)) * (width - LEFT - RIGHT);
  const laneY = (source) => LANE_TOP + Math.max(0, LANES.indexOf(source)) * LANE_H + LANE_H / 2;

  const svg = s('svg', {
    width, height, viewBox: `0 0 ${width} ${height}`, class: 'timeline', id: 'timeline', role: 'group',
    'aria-label': `Timeline of ${events.length} events from ${shortTime(new Date(t0 + pad).toISOString())} to ${shortTime(new Date(t1 - pad).toISOString())}. Tab to each mark; Enter opens its detail.`,
  }, s('title', {}, `Timeline of ${events.length} events`));

  svg.append(band(events, x, width, t1));
  for (const source of LANES) {
    const y = laneY(source);
    svg.append(s('g', { class: 'lane' },
      s('line', { x1: LEFT, x2: width - RIGHT, y1: y, y2: y, class: 'lane-line' }),
      s('text', { x: 8, y: y + 4, class: 'lane-label' }, s('title', {}, SOURCE_WORDS[source] || source), LANE_LABELS[source] || source)));
  }
  svg.append(axis(t0, t1, x, LANE_TOP + LANES.length * LANE_H + 4, width));

  const marks = s('g', { class: 'marks' });
  for (const source of LANES) {
    const inLane = events.filter((e) => (LANES.includes(e.source) ? e.source : 'query') === source)
      .map((e) => ({ e, x: x(Date.parse(e.observedAt)) }))
      .sort((a, b) => a.x - b.x || a.e.position - b.e.position);
    for (const group of groups(inLane)) {
      marks.append(group.length === 1
        ? single(group[0], laneY(source), x, conflicts, onOpen)
        : grouped(group, laneY(source), conflicts, onOpen));
    }
  }
  svg.append(marks);
  return svg;
}

function groups(items) {
  const out = [];
  let current = [];
  for (const item of items) {
    if (current.length && item.x - current[0].x >= GROUP_PX) { out.push(current); current = []; }
    current.push(item);
  }
  if (current.length) out.push(current);
  return out;
}

/** The status after each event, in the ledger's recorded order, as stretches of one status. */
function band(events, x, width, t1) {
  const g = s('g', { class: 'band', 'aria-label': 'Status after each event, over recorded time' });
  const ordered = [...events].sort((a, b) => a.position - b.position);
  let i = 0;
  while (i < ordered.length) {
    let j = i;
    while (j + 1 < ordered.length && ordered[j + 1].statusAfter === ordered[i].statusAfter) j++;
    const from = Date.parse(ordered[i].recordedAt);
    const to = j + 1 < ordered.length ? Date.parse(ordered[j + 1].recordedAt) : t1;
    const x0 = x(from), x1 = Math.max(x(to), x0 + 2);
    const code = ordered[i].statusAfter;
    const words = `${STATUSES[code] || code} (${code})`;
    g.append(s('rect', { x: x0, y: BAND_Y, width: x1 - x0, height: BAND_H, class: `band-rect status-${code}` },
      s('title', {}, `${words} from ${shortTime(ordered[i].recordedAt)}${j + 1 < ordered.length ? ' to ' + shortTime(ordered[j + 1].recordedAt) : ' on'}`)));
    if (x1 - x0 > 70) g.append(s('text', { x: x0 + 6, y: BAND_Y + 16, class: 'band-label' }, words));
    // The status now, when its stretch is too short for its name (events recorded close together at the end).
    else if (j + 1 === ordered.length) g.append(s('text', { x: x0 - 6, y: BAND_Y + 16, class: 'band-label-outside', 'text-anchor': 'end' }, `now ${words} →`));
    i = j + 1;
  }
  return g;
}

function single({ e, x: ox }, y, x, conflicts, onOpen) {
  const conflict = conflicts.has(e.position);
  const label = `${e.type} from ${SOURCE_WORDS[e.source] || e.source}, observed ${shortTime(e.observedAt)}, recorded ${shortTime(e.recordedAt)}, status after: ${STATUSES[e.statusAfter]} (${e.statusAfter})`
    + (conflict ? ', conflict' : '') + (e.redeliveries ? `, redelivered ${e.redeliveries} times` : '');
  const g = s('g', {
    class: `mark source-${e.source}${conflict ? ' conflict' : ''}${e.redeliveries ? ' redelivered' : ''}`,
    tabindex: 0, role: 'button', 'aria-label': label, 'data-count': 1, 'data-position': e.position,
  }, s('title', {}, label));
  const rx = x(Date.parse(e.recordedAt));
  if (Math.abs(Date.parse(e.recordedAt) - Date.parse(e.observedAt)) >= DIFFER_MS && Math.abs(rx - ox) >= 3) {
    g.append(s('line', { x1: ox, x2: rx, y1: y + 12, y2: y + 12, class: 'recorded-link' }),
      s('line', { x1: rx, x2: rx, y1: y + 6, y2: y + 18, class: 'recorded-tick' }));
  }
  if (conflict) g.append(s('circle', { cx: ox, cy: y, r: 10, class: 'conflict-ring' }));
  if (e.redeliveries) {
    g.append(s('circle', { cx: ox, cy: y, r: 8, class: 'redelivery-ring' }),
      s('text', { x: ox + 10, y: y - 8, class: 'redelivery-count' }, `×${e.redeliveries + 1}`));
  }
  g.append(s('circle', { cx: ox, cy: y, r: 6, class: 'dot' }));
  return activate(g, [e], onOpen);
}

function grouped(items, y, conflicts, onOpen) {
  const events = items.map((i) => i.e);
  const cx = (items[0].x + items[items.length - 1].x) / 2;
  const conflict = events.some((e) => conflicts.has(e.position));
  const redeliveries = events.reduce((sum, e) => sum + (e.redeliveries || 0), 0);
  const redelivered = redeliveries > 0;
  const label = `${events.length} ${events[0].source} events observed from ${shortTime(events[0].observedAt)} to ${shortTime(events[events.length - 1].observedAt)}`
    + (conflict ? ', including a conflict' : '') + (redelivered ? `, redelivered ${redeliveries} times in all` : '') + '. Enter lists them.';
  const g = s('g', {
    class: `mark group source-${events[0].source}${conflict ? ' conflict' : ''}${redelivered ? ' redelivered' : ''}`, tabindex: 0,
    role: 'button', 'aria-label': label, 'data-count': events.length,
  }, s('title', {}, label));
  if (conflict) g.append(s('circle', { cx, cy: y, r: 16, class: 'conflict-ring' }));
  // A redelivery inside the group is marked as on a single event: the dashed ring, and
  // how many deliveries the group's events came in all (each event once, plus its redeliveries).
  if (redelivered) {
    g.append(s('circle', { cx, cy: y, r: 13, class: 'redelivery-ring' }),
      s('text', { x: cx + 14, y: y - 10, class: 'redelivery-count' }, `×${events.length + redeliveries}`));
  }
  g.append(s('circle', { cx, cy: y, r: 11, class: 'dot' }),
    s('text', { x: cx, y: y + 4, class: 'group-count', 'text-anchor': 'middle' }, String(events.length)));
  return activate(g, events, onOpen);
}

function activate(g, events, onOpen) {
  g.addEventListener('click', () => onOpen(events, g));
  g.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); onOpen(events, g); }
  });
  return g;
}

const STEPS = [1, 5, 15, 60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400].map((n) => n * 1000);

function axis(t0, t1, x, y, width) {
  const g = s('g', { class: 'axis', 'aria-hidden': 'true' });
  const room = Math.max(2, Math.floor((width - LEFT - RIGHT) / 130));
  const step = STEPS.find((st) => (t1 - t0) / st <= room) || STEPS[STEPS.length - 1];
  g.append(s('line', { x1: LEFT, x2: width - RIGHT, y1: y, y2: y, class: 'axis-line' }));
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const d = new Date(t).toISOString();
    const label = step >= 86400_000 ? d.slice(5, 10) : step >= 60_000 ? d.slice(5, 16).replace('T', ' ') : d.slice(11, 19);
    g.append(s('line', { x1: x(t), x2: x(t), y1: y, y2: y + 5, class: 'axis-tick' }),
      s('text', { x: x(t), y: y + 18, class: 'axis-label', 'text-anchor': 'middle' }, label));
  }
  g.append(s('text', { x: 8, y: y + 18, class: 'axis-label' }, 'observed time (UTC)'));
  return g;
}

// The quarantine (auditor): rejected deliveries, newest first (GET /v1/quarantine), each
// body on demand (GET /v1/quarantine/{id}) as text or hex.
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { text, time } from '../format.js';
import { bodyView } from '../json-view.js';
import { loading, inlineError } from './states.js';

export async function renderQuarantine(page) {
  const list = h('div', { id: 'quarantine-list' });
  replace(page, h('section', { class: 'page', id: 'quarantine-page' },
    h('h1', {}, 'Quarantine'),
    h('p', { class: 'help' }, 'Deliveries the ledger refused (a bad, missing or stale signature, or a signed body it could not use). They are evidence, never events. Credentials in the headers are redacted.'),
    list));
  await showPage(list, null);
}

async function showPage(el, before) {
  loading(el, 'rejected deliveries');
  let page;
  try {
    page = await api('/v1/quarantine?limit=50' + (before ? `&before=${encodeURIComponent(before)}` : ''));
  } catch (error) {
    if (el.isConnected) el.replaceChildren(inlineError(error));
    return;
  }
  if (page.deliveries.length === 0) {
    replace(el, h('p', { class: 'empty', id: 'quarantine-empty' }, before ? 'No older rejected deliveries.' : 'The quarantine is empty: no delivery has been refused.'));
    return;
  }
  replace(el,
    h('table', { class: 'quarantine', id: 'quarantine-table' },
      h('caption', {}, 'Rejected deliveries, newest first'),
      h('thead', {}, h('tr', {}, ['Received', 'Source address', 'Route', 'Reason', 'Size', 'Headers (redacted)', 'Body']
        .map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, page.deliveries.map(row))),
    h('div', { class: 'pager' },
      before ? h('button', { type: 'button', onclick: () => showPage(el, null) }, '← Newest') : null,
      page.nextBefore ? h('button', { type: 'button', id: 'quarantine-older', onclick: () => showPage(el, page.nextBefore) }, 'Older →') : null));
}

function row(d) {
  const body = h('div', { class: 'quarantine-body' });
  const show = h('button', { type: 'button', class: 'small', 'data-id': d.id }, 'Show body');
  show.addEventListener('click', async () => {
    show.disabled = true;
    body.replaceChildren(h('p', { class: 'loading', role: 'status' }, 'Loading the body…'));
    try {
      const full = await api(`/v1/quarantine/${d.id}`);
      body.replaceChildren(bodyView(full.body, `quarantine-${d.id}`));
      show.hidden = true;
    } catch (error) {
      body.replaceChildren(inlineError(error));
      show.disabled = false;
    }
  });
  return h('tr', { 'data-id': d.id },
    h('td', {}, time(d.receivedAt)),
    h('td', {}, text(d.sourceAddress)),
    h('td', {}, text(d.provider), h('br'), h('code', {}, d.path)),
    h('td', {}, h('strong', {}, d.reason), h('br'), text(d.detail)),
    h('td', { class: 'num' }, `${d.size} B`),
    h('td', {}, h('dl', { class: 'headers' }, Object.entries(d.headers).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
    h('td', {}, show, body));
}

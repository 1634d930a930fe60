// Search: one box for any external id, the list's filters, and keyset pages (GET /v1/orders).
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { amount, statusBadge, text, time, yesNo, STATUSES } from '../format.js';
import { loading, inlineError } from './states.js';

const FILTERS = ['q', 'status', 'paid', 'attention', 'provider', 'updatedFrom', 'updatedTo'];

export async function renderSearch(page) {
  const params = new URLSearchParams(location.search);
  const field = (name, label, input) => h('div', { class: 'field' }, h('label', { for: `f-${name}` }, label), input);
  const textInput = (name, placeholder) =>
    h('input', { id: `f-${name}`, name, type: 'text', placeholder, value: params.get(name) || '', spellcheck: 'false' });
  const select = (name, options) => {
    const el = h('select', { id: `f-${name}`, name },
      options.map(([value, label]) => h('option', { value }, label)));
    el.value = params.get(name) || '';
    return el;
  };
  const form = h('form', { class: 'search', id: 'search-form', role: 'search' },
    field('q', 'Order number, provider order id, tx hash or customer id',
      textInput('q', 'ORD-2026-000123, 0xfeed…, CUST-42')),
    h('div', { class: 'filters' },
      field('status', 'Status', select('status', [['', 'any'], ...Object.entries(STATUSES).map(([c, n]) => [c, `${n} (${c})`])])),
      field('paid', 'Paid', select('paid', [['', 'any'], ['true', 'paid'], ['false', 'not paid']])),
      field('attention', 'Attention', select('attention', [['', 'any'], ['true', 'needs attention'], ['false', 'no attention']])),
      field('provider', 'Provider', textInput('provider', 'web3, banxa…')),
      field('updatedFrom', 'Updated from', textInput('updatedFrom', '2026-11-01 or RFC 3339')),
      field('updatedTo', 'Updated to', textInput('updatedTo', '2026-11-08 or RFC 3339'))),
    h('button', { type: 'submit' }, 'Search'));
  const results = h('div', { id: 'results' });
  replace(page, h('section', { class: 'page', id: 'search-page' }, h('h1', {}, 'Find an order'), form, results));

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = form.elements[name].value.trim();
      if (value) next.set(name, value);
    }
    // The filters go into the address (never the token), so back and reload keep them.
    history.replaceState(null, '', '/console/' + (next.toString() ? '?' + next : ''));
    showPage(results, next, []);
  });
  showPage(results, filtersFrom(params), []);
}

function filtersFrom(params) {
  const out = new URLSearchParams();
  for (const name of FILTERS) if (params.get(name)) out.set(name, params.get(name));
  return out;
}

// The latest search asked for in each results area: an answer to an earlier one that
// arrives after it (a slow first search, then a quick second) is dropped, never shown.
const latest = new WeakMap();

/** One page of results; `trail` holds the cursors of the pages before, for "Previous". */
async function showPage(el, filters, trail, cursor) {
  const ticket = {};
  latest.set(el, ticket);
  loading(el, 'orders');
  const query = new URLSearchParams(filters);
  query.set('limit', '25');
  if (cursor) query.set('cursor', cursor);
  let page;
  try {
    page = await api('/v1/orders?' + query);
  } catch (error) {
    if (el.isConnected && latest.get(el) === ticket) el.replaceChildren(inlineError(error));
    return;
  }
  if (latest.get(el) !== ticket) return;
  const rows = page.orders.map((o) => h('tr', { 'data-order': o.merchantOrderNo },
    h('td', {}, h('a', { href: `/console/orders/${encodeURIComponent(o.merchantOrderNo)}`, 'data-link': true }, o.merchantOrderNo)),
    h('td', {}, statusBadge(o.status, o.statusName)),
    h('td', {}, yesNo(o.paid, 'paid', 'unpaid')),
    h('td', {}, o.attention ? h('span', { class: 'mark mark-attention', title: 'needs attention' }, '⚠ attention') : ''),
    h('td', { class: 'num' }, amount(o.expectedAmount, o.asset)),
    h('td', { class: 'num' }, amount(o.paidAmount, o.asset)),
    h('td', {}, text(o.provider)),
    h('td', {}, text(o.externalCustomerId)),
    h('td', {}, time(o.updatedAt))));
  const nav = h('div', { class: 'pager' },
    trail.length ? h('button', { type: 'button', onclick: () => showPage(el, filters, trail.slice(0, -1), trail[trail.length - 1] || undefined) }, '← Newer') : null,
    page.nextCursor ? h('button', { type: 'button', id: 'next-page', onclick: () => showPage(el, filters, [...trail, cursor || ''], page.nextCursor) }, 'Older →') : null);
  replace(el,
    rows.length === 0
      ? h('p', { class: 'empty', id: 'no-results' }, 'No order matches. The box matches an id exactly: check for a missing character.')
      : h('table', { class: 'orders', id: 'orders-table' },
        h('caption', {}, `Orders, newest update first${trail.length ? ` (page ${trail.length + 1})` : ''}`),
        h('thead', {}, h('tr', {}, ['Order', 'Status', 'Paid', 'Attention', 'Expected', 'Paid amount', 'Provider', 'Customer', 'Updated']
          .map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, rows)),
    nav);
}

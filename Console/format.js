// Words and numbers as support staff read them: statuses, times, amounts, and what a
// conflict, a client signal or a verification means.
import { h } from './dom.js';
import * as session from './session.js';

export const STATUSES = {
  1: 'awaiting payment', 2: 'confirming', 3: 'paid', 4: 'completed', 5: 'expired', 6: 'manual review',
};

/** A status badge: its name in words and its code. */
export function statusBadge(code, name) {
  const words = STATUSES[code] || name || 'unknown';
  return h('span', { class: `badge status-${code}`, title: `status ${code}: ${name || words}` }, `${words} (${code})`);
}

/**
 * A time as microseconds since the epoch, read as the API reads `asOf` (TimeBound): a date
 * (midnight UTC), or an RFC 3339 time with its offset, to the microsecond at most, no leap
 * second. NaN when it is neither: a time without an offset is not guessed at.
 * Microseconds, because recorded times have them and milliseconds would merge two events.
 */
export function timeMicros(value) {
  let text = String(value).trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) text += 'T00:00:00Z';
  const m = /^(\d{4}-\d{2}-\d{2})[Tt]((?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d)(?:\.(\d{1,6}))?(Z|z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/.exec(text);
  if (!m) return NaN;
  // A day the month does not have (2026-02-30) is refused, as the API refuses it, not rolled over.
  const day = new Date(`${m[1]}T00:00:00Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== m[1]) return NaN;
  const seconds = Date.parse(`${m[1]}T${m[2]}${m[4] === 'z' ? 'Z' : m[4]}`);
  return seconds * 1000 + Number((m[3] || '').padEnd(6, '0'));
}

/** "2026-11-01 12:00:03 UTC", with the exact RFC 3339 value as a tooltip. */
export function time(value) {
  if (!value) return h('span', { class: 'none' }, '—');
  return h('time', { datetime: value, title: value }, shortTime(value));
}

export function shortTime(value) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$|Z$/, '') + ' UTC';
}

export function amount(value, asset) {
  if (value === null || value === undefined) return h('span', { class: 'none' }, '—');
  return `${value}${asset ? ' ' + asset : ''}`;
}

export function yesNo(flag, yes, no = 'no') {
  return flag ? h('span', { class: 'mark mark-yes' }, yes) : h('span', { class: 'mark mark-no' }, no);
}

/** The API masks e-mail addresses for support as `j***@example.com`. */
const MASKED = /\*\*\*(@|%40)/;
export const isMasked = (text) => typeof text === 'string' && MASKED.test(text);

/** A value from the outside world as text; a masked address is marked so the page shows where masking applied. */
export function text(value) {
  if (value === null || value === undefined || value === '') return h('span', { class: 'none' }, '—');
  const str = String(value);
  if (isMasked(str)) {
    return h('span', { class: 'masked', title: 'e-mail address masked for support tokens' }, str,
      h('span', { class: 'masked-note' }, ' masked'));
  }
  return h('span', {}, str);
}

/** What the last SDK callback means, in the customer's terms. */
const CALLBACKS = {
  banxaDidCompleteCheckout: 'customer reports checkout completed',
  banxaDidFail: "customer's app reports the checkout failed",
  banxaDidDismiss: 'customer closed the checkout without finishing it',
  bankAccountAdded: 'customer reports a bank account was added',
  acceptedTransactionIntentServiceFee: 'customer accepted the service fee',
  close: 'customer closed the payment screen',
  error: "the payment SDK reported an error in the customer's app",
};

export function clientSignalWords(signal) {
  const words = CALLBACKS[signal.callback] || `the customer's app sent "${signal.callback}"`;
  return `${words[0].toUpperCase()}${words.slice(1)} (${signal.provider} SDK, ${shortTime(signal.occurredAt || signal.observedAt)}). ` +
    'A client signal is what the app says; it never changes the status, which only webhooks, queries and corrections decide.';
}

export function conflictWords(c) {
  if (c.kind === 'status_conflict') {
    return `After the order was paid, an observation at ${shortTime(c.observedAt)} (event #${c.position}) reported ` +
      `"${STATUSES[c.status] || c.statusName}" (${c.status}). The ledger keeps the order paid and flags it for attention: check with the provider.`;
  }
  if (c.kind === 'amount_mismatch' && c.observedAsset) {
    return `The payment observed at ${shortTime(c.observedAt)} (event #${c.position}) is ${c.observed ?? '?'} ${c.observedAsset}, ` +
      `in none of the order's units, but ${c.expected ?? '?'} ${c.asset ?? ''} was expected. No rate is applied: the order is flagged for attention.`;
  }
  if (c.kind === 'amount_mismatch') {
    return `The payment observed at ${shortTime(c.observedAt)} (event #${c.position}) is ${c.observed ?? '?'} ${c.asset ?? ''}, ` +
      `but ${c.expected ?? '?'} ${c.asset ?? ''} was expected. The order is flagged for attention.`;
  }
  return `${c.kind} at ${shortTime(c.observedAt)} (event #${c.position}).`;
}

/** How an event was verified, in words. */
export function verificationWords(event) {
  const by = event.verifiedBy || '';
  if (by === 'signature') return "Verified: the provider's signature on the delivery checked out.";
  if (by.startsWith('token:')) return `Sent with the ledger token "${by.slice(6)}" (authenticated, not signed by the provider).`;
  if (by === 'poller') return "Fetched by the ledger's own poller from the provider's query API.";
  return by ? `Received via ${by}.` : 'No verification recorded.';
}

export const SOURCE_WORDS = {
  webhook: 'provider webhook', query: 'query / merchant backend', operator: 'operator correction', client: "customer's app (SDK)",
};

export function roleNote() {
  return session.isAuditor() ? 'auditor: everything unmasked' : 'support: e-mail addresses are masked';
}

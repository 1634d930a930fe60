// Loading and error states: every fetch shows one, and an error names what went wrong.
import { h, replace } from '../dom.js';

export function loading(el, what) {
  replace(el, h('p', { class: 'loading', role: 'status' }, `Loading ${what}…`));
}

/** An error in words, with a way back. */
export function failed(el, error, { back = true } = {}) {
  const status = error && error.status !== undefined ? error.status : null;
  const heading = {
    0: 'The ledger cannot be reached', 401: 'Signed out', 403: 'Not allowed for your role',
    404: 'Not found', 503: 'The ledger is unavailable',
  }[status] || 'Something went wrong';
  replace(el, h('section', { class: 'error', role: 'alert', 'data-status': status ?? '' },
    h('h2', {}, heading),
    h('p', {}, error && error.message ? error.message : String(error)),
    back ? h('p', {}, h('a', { href: '/console/', 'data-link': true }, 'Back to search')) : null));
}

/** A small inline error (a panel inside a page that stays usable). */
export function inlineError(error) {
  return h('p', { class: 'error inline', role: 'alert' }, error && error.message ? error.message : String(error));
}

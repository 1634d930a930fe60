// The console's entry: which page a path shows, the navigation, and sign-in and sign-out.
// Every page is drawn from the JSON API with the token of this tab's session.
import { h, replace } from './dom.js';
import * as session from './session.js';
import { roleNote } from './format.js';
import { renderSignIn } from './views/signin.js';
import { renderSearch } from './views/search.js';
import { renderOrder } from './views/order.js';
import { renderQuarantine } from './views/quarantine.js';
import { renderLedger } from './views/ledger.js';
import { failed } from './views/states.js';

const view = document.getElementById('view');
let pendingMessage = null;

/** A path segment decoded; a malformed escape stays as written (and finds no page). */
function safeDecode(segment) {
  try { return decodeURIComponent(segment); } catch { return segment; }
}

/** The page for a path under /console/. */
function route(pathname) {
  const rest = pathname.replace(/^\/console\/?/, '');
  const parts = rest.split('/').filter(Boolean).map(safeDecode);
  if (parts.length === 0 || (parts[0] === 'search' && parts.length === 1)) return { page: 'search' };
  if (parts[0] === 'orders' && parts.length === 2) return { page: 'order', no: parts[1] };
  if (parts[0] === 'quarantine' && parts.length === 1) return { page: 'quarantine', auditor: true };
  if (parts[0] === 'ledger' && parts.length === 1) return { page: 'ledger', auditor: true };
  return { page: 'unknown' };
}

export function navigate(path) {
  history.pushState(null, '', path);
  render();
}

function renderNav() {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!session.token()) { replace(nav); replace(who); return; }
  const link = (href, label) => h('a', { href, 'data-link': true }, label);
  replace(nav, link('/console/', 'Search'),
    session.isAuditor() ? [link('/console/quarantine', 'Quarantine'), link('/console/ledger', 'Ledger')] : null);
  replace(who, h('span', { class: `role role-${session.role()}`, id: 'role' }, `Signed in as ${roleNote()}`),
    h('button', { type: 'button', class: 'link', id: 'sign-out', onclick: () => session.signOut('You signed out.') }, 'Sign out'));
}

function render() {
  renderNav();
  if (!session.token()) {
    const message = pendingMessage;
    pendingMessage = null;
    renderSignIn(view, { message, onSignedIn: () => render() });
    return;
  }
  const r = route(location.pathname);
  // Each page draws into its own host: once another page replaces it, a late answer
  // for the old one lands in a detached element and shows nowhere.
  const page = h('div', { class: 'page-host' });
  replace(view, page);
  const run = (promise) => promise.catch((error) => { if (page.isConnected) failed(page, error); });
  if (r.auditor && !session.isAuditor()) {
    failed(page, { status: 403, message: 'This page is for auditors. Your token is a support token: the quarantine and the ledger page need an auditor token.' });
    return;
  }
  switch (r.page) {
    case 'search': run(renderSearch(page)); break;
    case 'order': run(renderOrder(page, r.no)); break;
    case 'quarantine': run(renderQuarantine(page)); break;
    case 'ledger': run(renderLedger(page)); break;
    default: failed(page, { status: 404, message: `The console has no page ${location.pathname}.` });
  }
}

// Links marked data-link stay inside the app (no reload, the token stays in this tab).
document.addEventListener('click', (event) => {
  const a = event.target.closest && event.target.closest('a[data-link]');
  if (!a || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', render);
window.addEventListener('ledger:signed-out', (event) => {
  pendingMessage = event.detail && event.detail.message;
  render();
});
// Never a blank page: an error nobody caught still ends in words.
window.addEventListener('unhandledrejection', (event) => failed(view, event.reason || 'an unexpected error'));

render();

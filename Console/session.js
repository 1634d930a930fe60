// The signed-in token and what its role lets the console show. The token lives in
// sessionStorage only: never in a URL, a cookie or a log (console.md).

const TOKEN = 'ledger.token';
const ROLE = 'ledger.role';

export function token() { return sessionStorage.getItem(TOKEN); }
export function role() { return sessionStorage.getItem(ROLE); }
export function isAuditor() { return role() === 'auditor'; }

export function signIn(newToken, newRole) {
  sessionStorage.setItem(TOKEN, newToken);
  sessionStorage.setItem(ROLE, newRole);
}

/** Forgets the token; `message` is shown on the sign-in page that follows. */
export function signOut(message) {
  sessionStorage.removeItem(TOKEN);
  sessionStorage.removeItem(ROLE);
  window.dispatchEvent(new CustomEvent('ledger:signed-out', { detail: { message } }));
}

/**
 * The token's role, learnt from the JSON API alone (the console has no private routes and
 * the API has no "who am I"): GET /v1/ledger/head admits only auditors, GET /v1/orders
 * support and auditors. Returns 'auditor' or 'support'; throws a message otherwise.
 */
export async function probeRole(candidate) {
  const ask = (path) => fetch(path, {
    headers: { Authorization: 'Bearer ' + candidate, Accept: 'application/json' },
    credentials: 'omit', cache: 'no-store',
  });
  const head = await ask('/v1/ledger/head');
  if (head.status === 200) return 'auditor';
  if (head.status === 401) throw new Error('This token is not accepted: it is unknown, expired or revoked.');
  if (head.status === 503) throw new Error(unavailable(head));
  if (head.status !== 403) throw new Error(`The ledger answered ${head.status} to the sign-in check.`);
  const list = await ask('/v1/orders?limit=1');
  if (list.status === 200) return 'support';
  if (list.status === 403) throw new Error('This token belongs to a role the console is not for (ingest, accountant or client). Use a support or auditor token.');
  if (list.status === 503) throw new Error(unavailable(list));
  throw new Error(`The ledger answered ${list.status} to the sign-in check.`);
}

function unavailable(response) {
  const after = response.headers.get('Retry-After');
  return 'The ledger is unavailable (503)' + (after ? `: try again in ${after} s.` : '.');
}

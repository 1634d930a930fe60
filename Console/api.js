// The JSON API as the views call it: adds the token, and turns a problem+json answer
// into an ApiError whose message says in words what went wrong.
import * as session from './session.js';
import { parseExact } from './exact-json.js';

export class ApiError extends Error {
  constructor(status, title, detail, retryAfter) {
    super(describe(status, title, detail, retryAfter));
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

function describe(status, title, detail, retryAfter) {
  const why = detail ? `: ${detail}` : '';
  switch (status) {
    case 0: return 'The ledger cannot be reached: check that ledger serve is running, then try again.';
    case 400: return `The ledger refused the request (400 ${title})${why}.`;
    case 401: return `Your token was not accepted (401)${why}. It may have expired or been revoked: sign in again.`;
    case 403: return `Your token's role may not see this (403)${why}.`;
    case 404: return `Not found (404)${why}.`;
    case 503: return `The ledger is unavailable right now (503)${why}.` + (retryAfter ? ` Try again in ${retryAfter} s (Retry-After).` : ' Try again shortly.');
    default: return `The ledger answered ${status} ${title || ''}${why}.`;
  }
}

/** GET or POST `path`; resolves with the parsed JSON, rejects with an ApiError. A 401 also signs out. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  const t = session.token();
  // Signed out (an earlier call of the same page was refused): nothing is sent, and the
  // sign-in page keeps the reason the refusal gave.
  if (!t) throw new ApiError(401, '', 'you are signed out', null);
  headers.Authorization = 'Bearer ' + t;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit', cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, '', '', null);
  }
  if (response.ok) {
    const text = await response.text();
    return text === '' ? null : parseExact(text);
  }
  let problem = {};
  try { problem = await response.json(); } catch { /* not JSON: the status says enough */ }
  const error = new ApiError(response.status, problem.title || response.statusText, problem.detail || '',
    response.headers.get('Retry-After'));
  if (response.status === 401) session.signOut(error.message);
  throw error;
}

/** A path segment, encoded. */
export const seg = (text) => encodeURIComponent(text);

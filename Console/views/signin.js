// The sign-in page: a token pasted once, checked against the API, kept in sessionStorage.
import { h, replace } from '../dom.js';
import * as session from '../session.js';

export function renderSignIn(el, { message, onSignedIn }) {
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true,
    'aria-describedby': 'token-help',
  });
  const status = h('p', { class: 'form-status', role: 'status', 'aria-live': 'polite' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'signin', id: 'signin-form' },
    h('label', { for: 'token' }, 'Your ledger token'),
    input,
    h('p', { id: 'token-help', class: 'help' },
      'A support or auditor token from `ledger token create`. It stays in this browser tab only (sessionStorage) and is sent in the Authorization header.'),
    button, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const candidate = input.value.trim();
    if (!candidate) return;
    // A header cannot carry a line break or a character beyond Latin-1 (a pasted zero-width
    // space, a curly quote): fetch would refuse it as if the ledger could not be reached.
    if (/[^\x21-\x7e]/.test(candidate)) {
      status.className = 'form-status error';
      status.textContent = 'The token holds a space, a line break or a character no token has: paste it again as one line.';
      return;
    }
    button.disabled = true;
    status.className = 'form-status loading';
    status.textContent = 'Checking the token…';
    try {
      const role = await session.probeRole(candidate);
      session.signIn(candidate, role);
      input.value = '';
      onSignedIn(role);
    } catch (error) {
      status.className = 'form-status error';
      status.textContent = error instanceof TypeError ? 'The ledger cannot be reached: check that ledger serve is running.' : error.message;
      button.disabled = false;
    }
  });
  replace(el, h('section', { class: 'page signin-page', id: 'signin-page' },
    h('h1', {}, 'Sign in'),
    message ? h('p', { class: 'error', role: 'alert', id: 'signin-message' }, message) : null,
    form));
  input.focus();
}

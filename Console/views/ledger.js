// The ledger page (auditor): the chain's head (GET /v1/ledger/head) and the newest signed
// checkpoint notes (GET /v1/ledger/checkpoints, read to its end: the notes are few).
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { time } from '../format.js';
import { loading, inlineError } from './states.js';

const SHOWN = 10;

export async function renderLedger(page) {
  const head = h('div', { id: 'ledger-head' });
  const notes = h('div', { id: 'ledger-checkpoints' });
  replace(page, h('section', { class: 'page', id: 'ledger-page' },
    h('h1', {}, 'Ledger'),
    h('h2', {}, 'Head'), head,
    h('h2', {}, 'Newest signed checkpoints'), notes));
  loading(head, 'the head');
  loading(notes, 'the checkpoints');
  try {
    const answer = await api('/v1/ledger/head');
    replace(head, h('dl', { class: 'fields' },
      h('dt', {}, 'Position'), h('dd', { id: 'head-position' }, String(answer.position)),
      h('dt', {}, 'Hash'), h('dd', {}, h('code', { id: 'head-hash' }, answer.hash)),
      h('dt', {}, 'Newest checkpoint'), h('dd', {}, answer.checkpoint ? `position ${answer.checkpoint.position}, signed ${answer.checkpoint.signedAt}` : 'none signed yet')));
  } catch (error) {
    head.replaceChildren(inlineError(error));
  }
  try {
    const all = [];
    let after = 0;
    for (let pages = 0; pages < 50; pages++) {
      const answer = await api(`/v1/ledger/checkpoints?after=${after}&limit=1000`);
      all.push(...answer.checkpoints);
      if (answer.nextCursor === null || answer.nextCursor === undefined) break;
      after = answer.nextCursor;
    }
    const newest = all.slice(-SHOWN).reverse();
    replace(notes, newest.length === 0
      ? h('p', { class: 'empty', id: 'no-checkpoints' }, 'No checkpoint has been signed yet: ledger checkpoint signs one, and ledger serve does periodically with LEDGER_CHECKPOINT_KEY.')
      : h('ol', { class: 'checkpoints' }, newest.map((c) => h('li', {},
        h('p', {}, `Position ${c.position}, signed `, time(c.signedAt), ', hash ', h('code', {}, c.hash)),
        h('pre', { class: 'note' }, c.note)))));
  } catch (error) {
    notes.replaceChildren(inlineError(error));
  }
}

// The ledger page (auditor): the chain's head (GET /v1/ledger/head) and the newest signed
// checkpoint notes (GET /v1/ledger/checkpoints, oldest first: read from a window of
// positions below the head, widened until it holds enough, never from the first note on).
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { time } from '../format.js';
import { loading, inlineError } from './states.js';

const SHOWN = 10;
const PAGE = 1000;
// Requests one visit may make at most, however many notes there are.
const MOST_REQUESTS = 40;

// The newest SHOWN notes: those after a window's start below the head (`headPosition`),
// the window eight times wider each time it holds fewer, down to position 0.
async function newestCheckpoints(headPosition) {
  let span = 1024;
  let requests = 0;
  for (;;) {
    const from = Math.max(0, headPosition - span);
    let newest = [];
    let after = from;
    for (;;) {
      const answer = await api(`/v1/ledger/checkpoints?after=${after}&limit=${PAGE}`);
      requests += 1;
      newest = newest.concat(answer.checkpoints).slice(-SHOWN);
      if (answer.nextCursor === null || answer.nextCursor === undefined || requests >= MOST_REQUESTS) break;
      after = answer.nextCursor;
    }
    if (newest.length >= SHOWN || from === 0 || requests >= MOST_REQUESTS) return newest;
    span *= 8;
  }
}

export async function renderLedger(page) {
  const head = h('div', { id: 'ledger-head' });
  const notes = h('div', { id: 'ledger-checkpoints' });
  replace(page, h('section', { class: 'page', id: 'ledger-page' },
    h('h1', {}, 'Ledger'),
    h('h2', {}, 'Head'), head,
    h('h2', {}, 'Newest signed checkpoints'), notes));
  loading(head, 'the head');
  loading(notes, 'the checkpoints');
  let headPosition = 0;
  try {
    const answer = await api('/v1/ledger/head');
    headPosition = Number(answer.position) || 0;
    replace(head, h('dl', { class: 'fields' },
      h('dt', {}, 'Position'), h('dd', { id: 'head-position' }, String(answer.position)),
      h('dt', {}, 'Hash'), h('dd', {}, h('code', { id: 'head-hash' }, answer.hash)),
      h('dt', {}, 'Newest checkpoint'), h('dd', {}, answer.checkpoint ? `position ${answer.checkpoint.position}, signed ${answer.checkpoint.signedAt}` : 'none signed yet')));
  } catch (error) {
    head.replaceChildren(inlineError(error));
  }
  try {
    const newest = (await newestCheckpoints(headPosition)).reverse();
    replace(notes, newest.length === 0
      ? h('p', { class: 'empty', id: 'no-checkpoints' }, 'No checkpoint has been signed yet: ledger checkpoint signs one, and ledger serve does periodically with LEDGER_CHECKPOINT_KEY.')
      : h('ol', { class: 'checkpoints' }, newest.map((c) => h('li', {},
        h('p', {}, `Position ${c.position}, signed `, time(c.signedAt), ', hash ', h('code', {}, c.hash)),
        h('pre', { class: 'note' }, c.note)))));
  } catch (error) {
    notes.replaceChildren(inlineError(error));
  }
}

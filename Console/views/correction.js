// The auditor's correction form: status and reason, then a confirmation step, then
// POST /v1/orders/{no}/corrections, which appends an operator event.
import { h, replace } from '../dom.js';
import { api, seg } from '../api.js';
import { STATUSES } from '../format.js';
import { inlineError } from './states.js';

export function correctionForm(no, currentStatus, onDone) {
  const box = h('section', { class: 'correction', id: 'correction', 'aria-labelledby': 'correction-heading' });
  const draw = () => {
    const status = h('select', { id: 'correction-status', name: 'status' },
      Object.entries(STATUSES).map(([c, n]) => h('option', { value: c }, `${n} (${c})`)));
    status.value = String(currentStatus);
    const reason = h('textarea', { id: 'correction-reason', name: 'reason', rows: 2, required: true, maxlength: 1000,
      placeholder: 'Why, in words another auditor will understand: "customer cancelled by phone, ticket 4411"' });
    const form = h('form', { id: 'correction-form' },
      h('div', { class: 'field' }, h('label', { for: 'correction-status' }, 'New status'), status),
      h('div', { class: 'field wide' }, h('label', { for: 'correction-reason' }, 'Reason'), reason),
      h('button', { type: 'submit', id: 'correction-review' }, 'Review correction…'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!reason.value.trim()) { reason.focus(); return; }
      confirmStep(Number(status.value), reason.value.trim());
    });
    replace(box, h('h2', { id: 'correction-heading' }, 'Correct this order'),
      h('p', { class: 'help' }, 'A correction is an operator event: it is appended to the ledger with your token\'s name as actor, and never rewrites what came before.'),
      form);
  };
  const confirmStep = (status, reason) => {
    const result = h('div', { role: 'status' });
    const confirm = h('button', { type: 'button', id: 'correction-confirm', class: 'danger' }, `Yes, set status ${STATUSES[status]} (${status})`);
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      result.className = 'loading';
      result.textContent = 'Recording the correction…';
      try {
        const answer = await api(`/v1/orders/${seg(no)}/corrections`, { method: 'POST', body: { status, reason } });
        result.className = 'ok';
        result.textContent = answer.duplicate ? 'This correction was already recorded.' : `Recorded as event #${answer.position}.`;
        onDone();
      } catch (error) {
        result.replaceChildren(inlineError(error));
        confirm.disabled = false;
      }
    });
    replace(box, h('h2', { id: 'correction-heading' }, 'Confirm the correction'),
      h('p', { id: 'correction-summary' }, `Order ${no} will get an operator event setting its status to ${STATUSES[status]} (${status}), with the reason: `,
        h('q', {}, reason), '. It cannot be removed, only corrected again.'),
      h('p', {}, confirm, ' ', h('button', { type: 'button', id: 'correction-cancel', onclick: draw }, 'Cancel')), result);
    confirm.focus();
  };
  draw();
  return box;
}

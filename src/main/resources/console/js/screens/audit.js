import { withQuery } from '../api.js';
import { h, time, table, badge } from '../dom.js';
import { pager } from '../pager.js';

const GOOD = new Set(['OK', 'CANCELLED', 'ALREADY_CANCELLED']);
const ACTIONS = ['', 'LOGIN', 'LOGOUT', 'CLOSE_ORDER', 'RESOLVE_EXCEPTION', 'RETRY_OUTBOX_EVENT', 'RUN_SWEEP',
  'RUN_RECONCILIATION', 'SET_STOCK', 'CREATE_COUPON'];

export function renderAudit(view, query) {
  const operator = h('input', { id: 'audit-operator', placeholder: 'operator', value: query.get('operator') || '' });
  const action = h('select', { id: 'audit-action' }, ACTIONS.map(a => h('option', { value: a, selected: a === (query.get('action') || '') }, a || 'any action')));
  const result = h('input', { id: 'audit-result', placeholder: 'result (OK, …)', value: query.get('result') || '' });
  const from = h('input', { id: 'audit-from', type: 'date', value: query.get('from') || '' });
  const to = h('input', { id: 'audit-to', type: 'date', value: query.get('to') || '' });
  const list = h('div', {});
  view.append(h('h2', {}, 'Audit log'),
    h('form', { class: 'filters', on: { submit: e => {
      e.preventDefault();
      location.hash = withQuery('#/audit', { operator: operator.value, action: action.value, result: result.value,
        from: from.value, to: to.value });
    } } }, operator, action, result, h('label', {}, 'from ', from), h('label', {}, 'to ', to),
    h('button', { type: 'submit', 'data-testid': 'apply-filters' }, 'Apply')),
    list);
  const params = { operator: query.get('operator'), action: query.get('action'), result: query.get('result'),
    from: query.get('from'), to: query.get('to'), limit: query.get('limit') || 50 };
  pager(list, withQuery('/admin/audit', params), rows => table([
    { title: 'at', cell: r => time(r.at) },
    { title: 'operator', cell: r => r.operator },
    { title: 'via', cell: r => [r.via, r.client ? h('div', { class: 'hint' }, r.client) : null] },
    { title: 'action', cell: r => r.action },
    { title: 'target', cell: r => r.target || '' },
    { title: 'detail', cell: r => r.detail || '' },
    { title: 'result', cell: r => r.result ? badge(r.result, GOOD.has(r.result) ? 'ok' : 'bad') : badge('unfinished', 'bad') },
    { title: 'message', cell: r => r.message || '' },
  ], rows, { 'data-testid': 'audit-table' }));
}

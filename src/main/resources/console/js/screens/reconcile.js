import { get, post } from '../api.js';
import { h, clear, time, table, badge, notice, orderLink } from '../dom.js';

export function renderReconcile(view) {
  const msg = h('div', { 'data-testid': 'action-message' });
  const report = h('div', { 'data-testid': 'report' });
  const run = h('button', { type: 'button', 'data-testid': 'run-reconcile', on: { click: async () => {
    run.disabled = true;
    try {
      show(await post('/admin/reconcile/run'));
      clear(msg);
    } catch (e) { notice(msg, e.message, false); }
    run.disabled = false;
  } } }, 'Run now');
  view.append(h('h2', {}, 'Reconciliation ', run), msg, report);

  function show(r) {
    clear(report).append(
      h('p', { class: r.ok ? 'ok-line' : 'bad-line', 'data-testid': 'report-summary' },
        time(r.startedAt), ' · ', r.durationMs, ' ms · ', r.ok ? 'all invariants hold' : r.violations + ' violation(s)'),
      table([
        { title: 'invariant', cell: c => [h('strong', {}, c.invariant), h('div', { class: 'hint' }, c.description)] },
        { title: 'result', cell: c => c.skipped ? badge('skipped: ' + c.skipped, 'skipped') : c.violations === 0 ? badge('ok', 'ok') : badge(c.violations + ' violation(s)', 'bad') },
        { title: 'violations (first listed)', cell: c => (c.listed || []).length === 0 ? '' : h('ul', {}, c.listed.map(v =>
          h('li', {}, v.orderNo ? orderLink(v.orderNo) : '', v.sku ? ' sku ' + v.sku : '', ': ', v.detail))) },
      ], r.checks || [], { 'data-testid': 'report-table' }));
  }

  get('/admin/reconcile/last').then(show, e => {
    if (e.status === 404) report.append(h('p', { class: 'hint' }, 'No reconciliation has run on this instance yet.'));
    else notice(msg, e.message, false);
  });
}

import { get, post } from '../api.js';
import { h, clear, time, table, notice } from '../dom.js';
import { pager } from '../pager.js';

export function renderSweeps(view) {
  const msg = h('div', { 'data-testid': 'action-message' });
  const settings = h('div', {});
  const list = h('div', {});
  const run = h('button', { type: 'button', 'data-testid': 'run-sweep', on: { click: async () => {
    run.disabled = true;
    run.textContent = 'Running…';
    try {
      const r = await post('/admin/sweeps/run');
      notice(msg, 'Run ' + r.id + ' on ' + r.instanceId + ': cancelled ' + r.cancelled + ' of ' + r.claimed
        + ' claimed in ' + r.batches + ' batch(es)' + (r.error ? '; stopped early: ' + r.error : ''), !r.error);
      p.reload();
    } catch (e) { notice(msg, e.message, false); }
    run.disabled = false;
    run.textContent = 'Run now';
  } } }, 'Run now');
  view.append(h('h2', {}, 'Timeout sweeps ', run), msg, h('h3', {}, 'Run log (all instances)'), list,
    h('h3', {}, 'Settings in force on this instance'), settings);
  const p = pager(list, '/admin/sweeps?limit=20', rows => table([
    { title: 'run', cell: r => r.id },
    { title: 'instance', cell: r => r.instanceId },
    { title: 'started', cell: r => time(r.startedAt) },
    { title: 'duration', cell: r => r.finishedAt ? ((new Date(r.finishedAt) - new Date(r.startedAt)) / 1000).toFixed(3) + ' s' : 'never finished' },
    { title: 'batches', cell: r => r.batches },
    { title: 'claimed', cell: r => r.claimed },
    { title: 'cancelled', cell: r => r.cancelled },
    { title: 'error', cell: r => r.error || '' },
  ], rows, { 'data-testid': 'sweeps-table' }));
  get('/admin/sweeps/settings').then(s => clear(settings).append(
    h('dl', { class: 'fields', 'data-testid': 'sweep-settings' }, Object.entries(s).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]))),
  e => notice(msg, e.message, false));
}

import { post, withQuery } from '../api.js';
import { h, time, table, badge, pre, notice, orderLink, attemptLog } from '../dom.js';
import { pager } from '../pager.js';

const TABS = ['PENDING', 'DEAD', 'DELIVERED'];

export function renderOutbox(view, query) {
  const status = TABS.includes(query.get('status')) ? query.get('status') : 'DEAD';
  const msg = h('div', { 'data-testid': 'action-message' });
  const list = h('div', {});
  view.append(h('h2', {}, 'Outbox'),
    h('div', { class: 'tabs' }, TABS.map(t => h('a', { href: '#/outbox?status=' + t, class: t === status ? 'active' : '',
      'data-testid': 'tab-' + t.toLowerCase() }, t))),
    status === 'DEAD' ? h('p', { class: 'hint' }, 'Retry puts a dead event back with fresh attempts and the same id ',
      '(the receiver\'s Idempotency-Key): a receiver that did get it before may see it twice.') : null,
    msg, list);
  const p = pager(list, withQuery('/admin/outbox', { status, limit: query.get('limit') || 25 }), rows => table([
    { title: 'seq', cell: r => r.seq },
    { title: 'type', cell: r => r.type },
    { title: 'order', cell: r => orderLink(r.orderNo) },
    { title: 'status', cell: r => badge(r.status) },
    { title: 'attempts', cell: r => h('details', {}, h('summary', {}, String(r.attempts)), attemptLog(r.attemptLog)) },
    { title: 'next attempt', cell: r => r.status === 'PENDING' ? time(r.nextAttemptAt) : '' },
    { title: 'last error', cell: r => r.lastError || '' },
    { title: 'created / delivered', cell: r => [time(r.createdAt), r.deliveredAt ? [' / ', time(r.deliveredAt)] : ''] },
    { title: 'payload', cell: r => h('details', {}, h('summary', {}, 'show'), pre(r.payload)) },
    { title: '', cell: r => r.status === 'DEAD' ? h('button', { type: 'button', 'data-testid': 'retry-event', on: { click: async e => {
      e.target.disabled = true;
      try {
        await post('/admin/outbox/' + encodeURIComponent(r.id) + '/retry');
        notice(msg, 'Event ' + r.id + ' is pending again.', true);
        p.reload();
      } catch (err) { notice(msg, err.message, false); e.target.disabled = false; }
    } } }, 'Retry') : '' },
  ], rows, { 'data-testid': 'outbox-table' }));
}

import { get, post, withQuery } from '../api.js';
import { h, clear, time, money, table, badge, pre, notice, orderLink, attemptLog } from '../dom.js';
import { pager } from '../pager.js';

const STATUSES = ['', 'OPEN', 'MANUAL_REVIEW', 'REFUND_PENDING', 'REFUND_PROCESSING', 'REFUND_FAILED', 'REFUNDED', 'RESOLVED'];
const KINDS = ['', 'LATE_AFTER_CANCEL', 'DOUBLE_PAYMENT', 'AMOUNT_MISMATCH', 'UNKNOWN_ORDER', 'CONFLICTING_DUPLICATE'];
const RESOLVABLE = new Set(['OPEN', 'MANUAL_REVIEW', 'REFUND_FAILED']);

function select(id, options, value) {
  return h('select', { id, name: id }, options.map(o => h('option', { value: o, selected: o === value }, o || 'any')));
}

/** The queue: filters in the URL (#/exceptions?status=...), newest first, cursor pages. */
export function renderExceptions(view, query) {
  const status = select('status', STATUSES, query.get('status') || '');
  const kind = select('kind', KINDS, query.get('kind') || '');
  const channel = h('input', { id: 'channel', placeholder: 'channel', value: query.get('channel') || '' });
  const from = h('input', { id: 'from', type: 'date', value: query.get('from') || '' });
  const to = h('input', { id: 'to', type: 'date', value: query.get('to') || '' });
  const filters = h('form', { class: 'filters', on: { submit: e => {
    e.preventDefault();
    location.hash = withQuery('#/exceptions', { status: status.value, kind: kind.value, channel: channel.value,
      from: from.value, to: to.value });
  } } },
  h('label', {}, 'status ', status), h('label', {}, 'kind ', kind), channel,
  h('label', {}, 'from ', from), h('label', {}, 'to ', to),
  h('button', { type: 'submit', 'data-testid': 'apply-filters' }, 'Apply'));
  const list = h('div', {});
  view.append(h('h2', {}, 'Exception queue'), filters, list);
  const params = { status: query.get('status'), kind: query.get('kind'), channel: query.get('channel'),
    from: query.get('from'), to: query.get('to'), limit: query.get('limit') || 25 };
  pager(list, withQuery('/admin/exceptions', params), rows => table([
    { title: 'id', cell: r => h('a', { href: '#/exceptions/' + r.id, 'data-testid': 'exception-link' }, '#' + r.id) },
    { title: 'opened', cell: r => time(r.createdAt) },
    { title: 'kind', cell: r => badge(r.kind) },
    { title: 'order', cell: r => orderLink(r.orderNo) },
    { title: 'channel / txn', cell: r => [r.channel, ' / ', r.txnId] },
    { title: 'amount', cell: r => money(r.amountCents) },
    { title: 'status', cell: r => badge(r.status) },
    { title: 'resolved by', cell: r => r.resolvedBy || '' },
  ], rows, { 'data-testid': 'exceptions-table' }));
}

/** One exception: its fields, history, refund attempts, gateway data; resolve and retry. */
export async function renderException(view, id) {
  const msg = h('div', { 'data-testid': 'action-message' });
  const body = h('div', {});
  view.append(h('h2', {}, 'Exception #', id, ' ', h('a', { href: '#/exceptions', class: 'small' }, '← queue')), msg, body);
  let ex;
  try {
    ex = await get('/admin/exceptions/' + encodeURIComponent(id));
  } catch (e) {
    notice(msg, e.message, false);
    return;
  }
  const reload = () => { clear(view); renderException(view, id); };
  body.append(
    h('dl', { class: 'fields' },
      h('dt', {}, 'kind'), h('dd', {}, badge(ex.kind)),
      h('dt', {}, 'status'), h('dd', { 'data-testid': 'exception-status' }, badge(ex.status)),
      h('dt', {}, 'order'), h('dd', { 'data-testid': 'exception-order' }, orderLink(ex.orderNo)),
      h('dt', {}, 'channel / txn'), h('dd', {}, ex.channel, ' / ', ex.txnId),
      h('dt', {}, 'amount'), h('dd', {}, money(ex.amountCents)),
      h('dt', {}, 'opened'), h('dd', {}, time(ex.createdAt)),
      h('dt', {}, 'resolution'), h('dd', { 'data-testid': 'exception-resolution' },
        ex.resolution ? [ex.resolution, ' by ', ex.resolvedBy, ' at ', time(ex.resolvedAt)] : '—'),
      h('dt', {}, 'note'), h('dd', { 'data-testid': 'exception-note' }, ex.resolutionNote || '—')),
    h('h3', {}, 'History'),
    table([
      { title: 'at', cell: r => time(r.at) },
      { title: 'event', cell: r => r.event },
      { title: 'from → to', cell: r => [r.from || '∅', ' → ', r.to] },
      { title: 'actor', cell: r => r.actor },
      { title: 'detail', cell: r => r.detail || '' },
    ], ex.history || [], { 'data-testid': 'history-table' }),
    h('h3', {}, 'Refund requests'),
    table([
      { title: 'event (refund id)', cell: r => r.eventId },
      { title: 'status', cell: r => badge(r.status) },
      { title: 'attempts (request → answer)', cell: r => [String(r.attempts), ' ', attemptLog(r.attemptLog)] },
      { title: 'delivered', cell: r => time(r.deliveredAt) },
      { title: '', cell: r => r.status === 'DEAD' ? h('button', { type: 'button', 'data-testid': 'retry-refund', on: { click: async e => {
        e.target.disabled = true;
        try {
          await post('/admin/outbox/' + encodeURIComponent(r.eventId) + '/retry');
          reload();
        } catch (err) { notice(msg, err.message, false); e.target.disabled = false; }
      } } }, 'Retry refund') : '' },
    ], ex.refundRequests || [], { 'data-testid': 'refunds-table' }),
    h('p', { class: 'hint' }, 'A retried refund keeps its refund id (the Idempotency-Key): the gateway must not pay it twice.'),
    h('h3', {}, 'Verified gateway data'),
    h('div', { 'data-testid': 'gateway' }, gateway(ex)));
  if (RESOLVABLE.has(ex.status)) body.append(resolveForm(ex, msg, reload));
}

function gateway(ex) {
  const parts = [];
  if (ex.receipt) parts.push(h('p', {}, 'Receipt: ', ex.receipt.gatewayStatus, ' · ', money(ex.receipt.amountCents),
    ' · first answer ', ex.receipt.outcome || '—', ' · received ', time(ex.receipt.receivedAt)));
  for (const n of ex.notifications || []) {
    parts.push(h('details', { open: true }, h('summary', {}, n.gatewayStatus, ' · ', money(n.amountCents), ' · order ', n.orderNo,
      ' · ', n.deliveries, ' delivery(ies), first ', time(n.firstAt), ', last ', time(n.lastAt),
      n.notificationId ? ' · notification ' + n.notificationId : ''),
      n.payload === null || n.payload === undefined ? h('p', { class: 'hint' }, 'no payload kept') : pre(n.payload, { 'data-testid': 'gateway-payload' })));
  }
  return parts.length ? parts : h('p', { class: 'hint' }, 'no stored gateway data for this txn');
}

function resolveForm(ex, msg, reload) {
  const resolution = h('select', { id: 'resolution' }, ['REFUNDED_MANUALLY', 'ORDER_REINSTATED', 'DISMISSED']
    .map(r => h('option', { value: r }, r)));
  const note = h('textarea', { id: 'resolve-note', rows: 3, maxlength: 2000, required: true, placeholder: 'what was done, and why (required)' });
  return h('form', { class: 'action', on: { submit: async e => {
    e.preventDefault();
    if (!note.value.trim()) { notice(msg, 'A note is required.', false); return; }
    try {
      await post('/admin/exceptions/' + ex.id + '/resolve', { resolution: resolution.value, note: note.value });
      reload();
    } catch (err) { notice(msg, err.message, false); }
  } } },
  h('h3', {}, 'Resolve'), h('label', { for: 'resolution' }, 'resolution '), resolution,
  h('label', { for: 'resolve-note' }, 'note'), note,
  h('button', { type: 'submit', 'data-testid': 'resolve-submit' }, 'Resolve'));
}

import { get, post, page, withQuery } from '../api.js';
import { h, clear, time, money, table, badge, pre, notice, orderLink, timeZoneIsUtc, setUtc } from '../dom.js';

const ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Lookup by order number or txn id (#/order/<no>, #/order?q=<no or txn>), then the whole record. */
export function renderOrder(view, orderNo, query) {
  const input = h('input', { id: 'order-query', placeholder: 'order number or txn id', value: orderNo || query.get('q') || '' });
  const msg = h('div', { 'data-testid': 'action-message' });
  const body = h('div', {});
  view.append(h('h2', {}, 'Order'),
    h('form', { class: 'filters', on: { submit: e => {
      e.preventDefault();
      location.hash = '#/order?q=' + encodeURIComponent(input.value.trim());
    } } }, input, h('button', { type: 'submit', 'data-testid': 'order-lookup' }, 'Look up')),
    msg, body);
  if (orderNo) show(body, msg, orderNo);
  else if (query.get('q')) lookup(body, msg, query.get('q').trim());
}

async function lookup(body, msg, q) {
  if (!ID.test(q)) { notice(msg, 'An order number or txn id has letters, digits and . _ : - only.', false); return; }
  try {
    await get('/admin/orders/' + encodeURIComponent(q));
    location.hash = '#/order/' + encodeURIComponent(q);
    return;
  } catch (e) {
    if (e.status !== 404) { notice(msg, e.message, false); return; }
  }
  let found;
  try {
    found = await page(withQuery('/admin/orders', { txnId: q, limit: 50 }));
  } catch (e) {
    notice(msg, e.message, false);
    return;
  }
  if (found.rows.length === 1) { location.hash = '#/order/' + encodeURIComponent(found.rows[0].orderNo); return; }
  if (found.rows.length === 0) { notice(msg, 'No order with number or txn id ' + q + '.', false); return; }
  body.append(h('p', {}, 'Orders touched by txn ', q, ':'),
    table([{ title: 'order', cell: r => orderLink(r.orderNo) }, { title: 'status', cell: r => badge(r.status) },
      { title: 'created', cell: r => time(r.createdAt) }], found.rows));
}

async function show(body, msg, orderNo) {
  let o;
  try {
    o = await get('/admin/orders/' + encodeURIComponent(orderNo));
  } catch (e) {
    notice(msg, e.status === 404 ? 'No order ' + orderNo + '.' : e.message, false);
    return;
  }
  const reload = () => { clear(body); show(body, msg, orderNo); };
  const download = h('button', { type: 'button', 'data-testid': 'download-json', on: { click: () => {
    const url = URL.createObjectURL(new Blob([JSON.stringify(o, null, 2)], { type: 'application/json' }));
    const a = h('a', {});
    a.href = url;
    a.download = 'order-' + o.orderNo + '.json';
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } } }, 'Download JSON');
  const zone = h('button', { type: 'button', 'data-testid': 'timeline-zone', on: { click: () => {
    setUtc(!timeZoneIsUtc());
    const box = document.getElementById('utc');
    if (box) box.checked = timeZoneIsUtc();
    reload();
  } } }, timeZoneIsUtc() ? 'show local time' : 'show UTC');
  body.append(
    h('div', { class: 'banner' }, h('span', { 'data-testid': 'order-no' }, o.orderNo), ' ',
      h('span', { 'data-testid': 'order-status' }, badge(o.status)), ' ', money(o.amountCents), ' ', download),
    h('dl', { class: 'fields' },
      h('dt', {}, 'user'), h('dd', {}, o.userId),
      h('dt', {}, 'created'), h('dd', {}, time(o.createdAt)),
      h('dt', {}, 'expires'), h('dd', {}, time(o.expiresAt)),
      h('dt', {}, 'paid'), h('dd', {}, o.paidAt ? [time(o.paidAt), ' · txn ', o.paidTxnId] : '—'),
      h('dt', {}, 'cancelled'), h('dd', {}, o.cancelledAt ? [time(o.cancelledAt), ' · by ', o.closedBy] : '—'),
      h('dt', {}, 'coupon'), h('dd', {}, o.coupon ? [o.coupon.code, ' · ', money(o.coupon.discountCents), ' off · ', o.coupon.status] : '—')),
    h('h3', {}, 'Items'),
    table([{ title: 'sku', cell: r => r.sku }, { title: 'qty', cell: r => r.qty },
      { title: 'unit price', cell: r => money(r.unitPriceCents) }], o.items || []),
    h('h3', {}, 'Timeline ', zone),
    h('ol', { class: 'timeline', 'data-testid': 'timeline' }, (o.transitions || []).map(t =>
      h('li', { class: 'src-' + String(t.source).toLowerCase() },
        h('span', { class: 'at' }, time(t.at)), ' ',
        h('strong', {}, (t.from || '∅') + ' → ' + t.to), ' ',
        badge(t.source), ' ', h('span', { class: 'actor' }, t.actor || ''),
        t.reference ? h('span', { class: 'ref' }, ' · ', t.reference) : null))),
    h('h3', {}, 'Payment receipts'),
    table([{ title: 'channel', cell: r => r.channel }, { title: 'txn', cell: r => r.txnId },
      { title: 'amount', cell: r => money(r.amountCents) }, { title: 'gateway status', cell: r => r.gatewayStatus },
      { title: 'outcome', cell: r => r.outcome || '' }, { title: 'received', cell: r => time(r.receivedAt) }], o.receipts || []),
    h('h3', {}, 'Payment attempts (verified gateway notifications)'),
    table([{ title: 'channel / txn', cell: r => [r.channel, ' / ', r.txnId] }, { title: 'gateway status', cell: r => badge(r.gatewayStatus) },
      { title: 'amount', cell: r => money(r.amountCents) }, { title: 'deliveries', cell: r => r.deliveries },
      { title: 'first / last', cell: r => [time(r.firstAt), ' / ', time(r.lastAt)] },
      { title: 'payload', cell: r => r.payload ? h('details', {}, h('summary', {}, 'show'), pre(r.payload)) : '' }],
    o.notifications || [], { 'data-testid': 'notifications-table' }),
    h('h3', {}, 'Exception orders'),
    table([{ title: 'id', cell: r => h('a', { href: '#/exceptions/' + r.id }, '#' + r.id) },
      { title: 'kind', cell: r => badge(r.kind) }, { title: 'txn', cell: r => r.txnId },
      { title: 'status', cell: r => badge(r.status) }], o.exceptions || []));
  if (o.status === 'PENDING_PAYMENT') body.append(closeForm(o, msg, reload));
}

function closeForm(o, msg, reload) {
  const reason = h('textarea', { id: 'close-reason', rows: 2, maxlength: 500, required: true, placeholder: 'reason (required)' });
  return h('form', { class: 'action', on: { submit: async e => {
    e.preventDefault();
    if (!reason.value.trim()) { notice(msg, 'A reason is required.', false); return; }
    try {
      const r = await post('/admin/orders/' + encodeURIComponent(o.orderNo) + '/cancel', { reason: reason.value });
      notice(msg, 'Order ' + r.orderNo + ': ' + r.outcome, true);
      reload();
    } catch (err) {
      notice(msg, err.code === 'ALREADY_PAID' ? 'The order was paid meanwhile; it was not closed.' : err.message, false);
      reload();
    }
  } } },
  h('h3', {}, 'Close manually'),
  h('p', { class: 'hint' }, 'Goes through the same gate as a timeout: if a payment wins first, nothing is closed.'),
  reason, h('button', { type: 'submit', 'data-testid': 'close-submit' }, 'Close order'));
}

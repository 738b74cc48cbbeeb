import { get } from '../api.js';
import { h, clear, time, notice } from '../dom.js';

const POLL_MS = 10000;

/** Counters from /admin/summary, polled while the tab is visible; answers the screen's cleanup. */
export function renderOverview(view) {
  const cards = h('div', { class: 'cards', 'data-testid': 'overview-cards' });
  const updated = h('span', { class: 'updated', 'data-testid': 'updated' }, 'loading…');
  const msg = h('div', {});
  view.append(h('h2', {}, 'Overview ', updated), msg, cards);
  let last = null;
  let timer = null;

  async function load() {
    try {
      render(await get('/admin/summary', { background: true }));
      last = Date.now();
      clear(msg);
    } catch (e) {
      notice(msg, 'refresh failed: ' + e.message, false);
    }
    tick();
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    timer = document.visibilityState === 'visible' ? setTimeout(load, POLL_MS) : null;
  }

  function tick() {
    if (last === null) return;
    const s = Math.round((Date.now() - last) / 1000);
    updated.textContent = 'updated ' + s + ' s ago' + (document.visibilityState === 'visible' ? '' : ' (paused)');
    updated.classList.toggle('stale', s > 3 * POLL_MS / 1000);
  }

  function card(label, value, opts = {}) {
    return h('a', { class: 'card' + (opts.alert && value > 0 ? ' alert' : ''), href: opts.href || '#/overview',
      'data-testid': 'card-' + opts.id },
      h('span', { class: 'value' }, value === null || value === undefined ? '—' : value),
      h('span', { class: 'label' }, label));
  }

  function render(s) {
    const today = s.exceptionsToday || {};
    const sweep = s.lastSweep;
    const rec = s.lastReconciliation;
    clear(cards).append(
      card('pending orders', s.pendingOrders, { id: 'pending' }),
      card('overdue (not swept)', s.overdueOrders, { id: 'overdue', alert: true, href: '#/sweeps' }),
      card('late payments today', today.LATE_AFTER_CANCEL || 0, { id: 'late', alert: true, href: '#/exceptions?kind=LATE_AFTER_CANCEL' }),
      card('double payments today', today.DOUBLE_PAYMENT || 0, { id: 'double', href: '#/exceptions?kind=DOUBLE_PAYMENT' }),
      card('amount mismatches today', today.AMOUNT_MISMATCH || 0, { id: 'mismatch', href: '#/exceptions?kind=AMOUNT_MISMATCH' }),
      card('unknown orders today', today.UNKNOWN_ORDER || 0, { id: 'unknown', href: '#/exceptions?kind=UNKNOWN_ORDER' }),
      card('conflicting duplicates today', today.CONFLICTING_DUPLICATE || 0, { id: 'conflicting', alert: true, href: '#/exceptions?kind=CONFLICTING_DUPLICATE' }),
      card('awaiting review', s.manualReview, { id: 'review', alert: true, href: '#/exceptions?status=MANUAL_REVIEW' }),
      card('refunds pending', s.refundsPending, { id: 'refunds-pending', href: '#/exceptions?status=REFUND_PENDING' }),
      card('refunds at the gateway', s.refundsProcessing, { id: 'refunds-processing', href: '#/exceptions?status=REFUND_PROCESSING' }),
      card('refunds failed', s.refundsFailed, { id: 'refunds-failed', alert: true, href: '#/exceptions?status=REFUND_FAILED' }),
      card('outbox pending', s.outboxPending, { id: 'outbox-pending', href: '#/outbox?status=PENDING' }),
      card('outbox dead', s.outboxDead, { id: 'outbox-dead', alert: true, href: '#/outbox?status=DEAD' }),
      h('a', { class: 'card wide', href: '#/sweeps', 'data-testid': 'card-sweep' },
        h('span', { class: 'label' }, 'last sweep run'),
        sweep ? h('span', {}, time(sweep.startedAt), ' · ', sweep.instanceId, ' · cancelled ', sweep.cancelled,
          sweep.error ? ' · error: ' + sweep.error : '') : h('span', {}, 'none yet'),
        h('span', { class: 'label' }, 'cancel lateness p99 (this instance): ',
          s.cancelLatenessP99Seconds === null || s.cancelLatenessP99Seconds === undefined ? '—' : '≤ ' + s.cancelLatenessP99Seconds + ' s')),
      h('a', { class: 'card wide' + (rec && !rec.ok ? ' alert' : ''), href: '#/reconcile', 'data-testid': 'card-reconcile' },
        h('span', { class: 'label' }, 'last reconciliation (this instance)'),
        rec ? h('span', {}, time(rec.startedAt), ' · ', rec.ok ? 'all invariants hold' : rec.violations + ' violation(s)')
          : h('span', {}, 'none since start')));
    cards.append(h('p', { class: 'hint' }, 'Today = since ', time(s.dayStart), '.'));
  }

  const ticker = setInterval(tick, 1000);
  const onVisibility = () => {
    if (document.visibilityState === 'visible') load();
    else { clearTimeout(timer); tick(); }
  };
  document.addEventListener('visibilitychange', onVisibility);
  load();
  return () => {
    clearTimeout(timer);
    clearInterval(ticker);
    document.removeEventListener('visibilitychange', onVisibility);
  };
}

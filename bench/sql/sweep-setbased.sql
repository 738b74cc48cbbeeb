-- Item 3's yardstick: the timeout sweep's work over every overdue order, hand-written as one
-- set-based transaction, the way a DBA would do it once. The same rows as the service's sweep
-- (dev.ordergate.sweep.Sweeper: SweepSql.CLAIM_AND_CANCEL, Sql.LOCK_STOCK_OF_ORDERS and Sql.CANCELLATION_EFFECTS) write:
-- the conditional cancel, stock rows locked in SKU order and restocked, one RETURN ledger row per
-- item, coupons released, one transition per order, ORDER_CANCELLED + NOTIFY_SMS outbox events.
-- Only the per-run bookkeeping (sweep_runs rows) is left out. psql -f sweep-setbased.sql
BEGIN;
CREATE TEMP TABLE swept ON COMMIT DROP AS
WITH c AS (
  UPDATE orders SET status = 'CANCELLED', cancelled_at = now(), closed_by = 'TIMEOUT_SWEEP'
  WHERE status = 'PENDING_PAYMENT' AND expires_at <= now()
  RETURNING order_no)
SELECT order_no FROM c;
ANALYZE swept;
SELECT count(*) AS locked_skus FROM (
  SELECT i.sku FROM inventory i
  WHERE i.sku IN (SELECT it.sku FROM order_items it JOIN swept s USING (order_no))
  ORDER BY i.sku FOR UPDATE OF i) l;
UPDATE inventory i SET available = i.available + t.qty, updated_at = now()
FROM (SELECT it.sku, sum(it.qty)::int AS qty FROM order_items it JOIN swept s USING (order_no) GROUP BY it.sku) t
WHERE i.sku = t.sku;
INSERT INTO inventory_ledger (sku, delta, kind, order_no, actor)
SELECT it.sku, it.qty, 'RETURN', it.order_no, 'TIMEOUT_SWEEP' FROM order_items it JOIN swept s USING (order_no);
UPDATE coupons c SET status = 'AVAILABLE', order_no = NULL, updated_at = now()
FROM swept s WHERE c.order_no = s.order_no AND c.status = 'LOCKED';
INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
SELECT order_no, 'PENDING_PAYMENT', 'CANCELLED', 'TIMEOUT_SWEEP', 'sql-script', 'sweep-setbased.sql' FROM swept;
INSERT INTO outbox_events (type, order_no, payload)
SELECT e.type, o.order_no, e.payload
FROM orders o JOIN swept s USING (order_no)
CROSS JOIN LATERAL (VALUES
    (1, 'ORDER_CANCELLED', jsonb_build_object(
        'orderNo', o.order_no, 'userId', o.user_id, 'amountCents', o.amount_cents,
        'cancelledAt', o.cancelled_at, 'source', 'TIMEOUT_SWEEP',
        'items', (SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'qty', i.qty) ORDER BY i.sku)
                    FROM order_items i WHERE i.order_no = o.order_no))),
    (2, 'NOTIFY_SMS', jsonb_build_object(
        'template', 'order_cancelled', 'userId', o.user_id, 'orderNo', o.order_no,
        'params', jsonb_build_object('amountCents', o.amount_cents)))
) AS e(ord, type, payload)
ORDER BY o.order_no, e.ord;
COMMIT;

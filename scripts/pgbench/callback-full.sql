-- One payment callback with exactly the statement the service's transaction runs for a batch
-- of one: Sql.CLAIM_AND_PAY (the delivery recorded, the receipt claimed with its answer, and for the
-- claimed key the conditional UPDATE whose RETURNING rows drive the coupon, the transition, and the
-- ORDER_PAID and NOTIFY_SMS outbox rows). GENERATED from dev.ordergate.db.Sql by PgbenchScriptTest, which fails when this file
-- and the service's statements differ. Same orders and sequence as callback.sql (setup.sql).
-- pgbench -n -M prepared -c 16 -j 2 -T 20 -f callback-full.sql
SELECT nextval('bench_seq') AS n \gset
BEGIN;
WITH noted AS (
    INSERT INTO payment_notifications AS n
        (channel, txn_id, order_no, amount_cents, gateway_status, notification_id, payload, deliveries)
    SELECT * FROM unnest(ARRAY['pgbench']::text[], ARRAY['PGB-' || :n]::text[], ARRAY['PGB-' || :n]::text[], ARRAY[100]::bigint[], ARRAY['SUCCESS']::text[], ARRAY[NULL]::text[],
                         ARRAY[NULL]::text[], ARRAY[1]::int[])
    ON CONFLICT (channel, txn_id, gateway_status, order_no, amount_cents)
    DO UPDATE SET deliveries = n.deliveries + EXCLUDED.deliveries, last_at = now()),
claimed AS (
    INSERT INTO payment_receipts (channel, txn_id, order_no, amount_cents, gateway_status, currency,
                                  outcome, order_status)
    SELECT r.*, 'APPLIED', 'PAID'
    FROM unnest(ARRAY['pgbench']::text[], ARRAY['PGB-' || :n]::text[], ARRAY['PGB-' || :n]::text[], ARRAY[100]::bigint[], ARRAY['SUCCESS']::text[], ARRAY['CNY']::text[]) AS r
    ON CONFLICT (channel, txn_id) DO NOTHING
    RETURNING channel, txn_id, order_no, amount_cents, currency),
x AS (
    SELECT c.order_no, c.channel, c.txn_id, c.amount_cents AS amount, c.currency
    FROM claimed c JOIN unnest(ARRAY['pgbench']::text[], ARRAY['PGB-' || :n]::text[]) AS f(channel, txn_id)
      ON c.channel = f.channel AND c.txn_id = f.txn_id),
paid AS (
    UPDATE orders o SET status = 'PAID', paid_at = now(), paid_channel = x.channel, paid_txn_id = x.txn_id,
                        closed_by = 'PAYMENT_CALLBACK'
    FROM x
    WHERE o.order_no = x.order_no AND o.status = 'PENDING_PAYMENT' AND o.amount_cents = x.amount
      AND (x.currency IS NULL OR o.currency = x.currency)
    RETURNING o.order_no, o.user_id, o.amount_cents, o.paid_at, o.paid_channel, o.paid_txn_id),
used AS (
    UPDATE coupons c SET status = 'USED', updated_at = now()
    FROM paid WHERE c.order_no = paid.order_no AND c.status = 'LOCKED'),
logged AS (
    INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
    SELECT order_no, 'PENDING_PAYMENT', 'PAID', 'PAYMENT_CALLBACK', paid_channel, paid_txn_id FROM paid),
events AS (
    INSERT INTO outbox_events (type, order_no, payload, status)
    SELECT e.type, p.order_no, e.payload, CASE WHEN current_setting('ordergate.outbox_stream', true) = 'on' THEN 'STREAM' ELSE 'PENDING' END
    FROM paid p
    CROSS JOIN LATERAL (VALUES
        (1, 'ORDER_PAID', jsonb_build_object(
            'orderNo', p.order_no, 'userId', p.user_id, 'amountCents', p.amount_cents,
            'paidAt', p.paid_at, 'channel', p.paid_channel, 'txnId', p.paid_txn_id,
            'items', (SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'qty', i.qty,
                                                          'unitPriceCents', i.unit_price_cents) ORDER BY i.sku)
                        FROM order_items i WHERE i.order_no = p.order_no))),
        (2, 'NOTIFY_SMS', jsonb_build_object(
            'template', 'order_paid'::text, 'userId', p.user_id, 'orderNo', p.order_no,
            'params', jsonb_build_object('amountCents', p.amount_cents)))
    ) AS e(ord, type, payload)
    ORDER BY p.order_no, e.ord)
SELECT c.channel, c.txn_id, p.order_no IS NOT NULL AS paid
FROM claimed c LEFT JOIN paid p ON p.paid_channel = c.channel AND p.paid_txn_id = c.txn_id;
END;

-- One payment callback with exactly the statements the service's transaction runs for a batch
-- of one: Sql.NOTE_AND_CLAIM (the delivery recorded, the receipt claimed), then Sql.PAY_ORDERS (the conditional UPDATE whose RETURNING rows
-- drive the coupon, the transition, the ORDER_PAID and NOTIFY_SMS outbox rows and the receipt's
-- answer). GENERATED from dev.ordergate.db.Sql by PgbenchScriptTest, which fails when this file
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
    DO UPDATE SET deliveries = n.deliveries + EXCLUDED.deliveries, last_at = now())
INSERT INTO payment_receipts (channel, txn_id, order_no, amount_cents, gateway_status, currency)
SELECT * FROM unnest(ARRAY['pgbench']::text[], ARRAY['PGB-' || :n]::text[], ARRAY['PGB-' || :n]::text[], ARRAY[100]::bigint[], ARRAY['SUCCESS']::text[], ARRAY['CNY']::text[])
ON CONFLICT (channel, txn_id) DO NOTHING
RETURNING channel, txn_id;
WITH paid AS (
    UPDATE orders o SET status = 'PAID', paid_at = now(), paid_channel = x.channel, paid_txn_id = x.txn_id,
                        closed_by = 'PAYMENT_CALLBACK'
    FROM unnest(ARRAY['PGB-' || :n]::text[], ARRAY['pgbench']::text[], ARRAY['PGB-' || :n]::text[], ARRAY[100]::bigint[], ARRAY['CNY']::text[]) AS x(order_no, channel, txn_id, amount, currency)
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
    INSERT INTO outbox_events (type, order_no, payload)
    SELECT e.type, p.order_no, e.payload
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
    ORDER BY p.order_no, e.ord),
receipts AS (
    UPDATE payment_receipts r SET outcome = 'APPLIED', order_status = 'PAID'
    FROM paid WHERE r.channel = paid.paid_channel AND r.txn_id = paid.paid_txn_id)
SELECT order_no FROM paid;
END;

-- One payment callback with every statement the service's per-callback transaction runs today
-- (dev.ordergate.gate.PaymentGate with a batch of one): claim the receipt, the conditional UPDATE,
-- the coupon, the transition, the two outbox events (ORDER_PAID, NOTIFY_SMS) and the receipt's
-- answer. Same orders and sequence as callback.sql (setup.sql); every UPDATE wins.
-- pgbench -n -M prepared -c 16 -j 2 -T 20 -f callback-full.sql
SELECT nextval('bench_seq') AS n \gset
BEGIN;
INSERT INTO payment_receipts (channel, txn_id, order_no, amount_cents, gateway_status)
  VALUES ('pgbench', 'PGB-' || :n, 'PGB-' || :n, 100, 'SUCCESS')
  ON CONFLICT (channel, txn_id) DO NOTHING RETURNING channel, txn_id;
UPDATE orders SET status = 'PAID', paid_at = now(), paid_channel = 'pgbench', paid_txn_id = 'PGB-' || :n,
                  closed_by = 'PAYMENT_CALLBACK'
  WHERE order_no = 'PGB-' || :n AND status = 'PENDING_PAYMENT' AND amount_cents = 100
  RETURNING order_no;
UPDATE coupons SET status = 'USED', updated_at = now() WHERE order_no = 'PGB-' || :n AND status = 'LOCKED';
INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
  VALUES ('PGB-' || :n, 'PENDING_PAYMENT', 'PAID', 'PAYMENT_CALLBACK', 'pgbench', 'PGB-' || :n);
INSERT INTO outbox_events (type, order_no, payload)
  SELECT e.type, o.order_no, e.payload
  FROM orders o
  CROSS JOIN LATERAL (VALUES
      (1, 'ORDER_PAID', jsonb_build_object(
          'orderNo', o.order_no, 'userId', o.user_id, 'amountCents', o.amount_cents,
          'paidAt', o.paid_at, 'channel', o.paid_channel, 'txnId', o.paid_txn_id,
          'items', (SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'qty', i.qty,
                                                        'unitPriceCents', i.unit_price_cents) ORDER BY i.sku)
                      FROM order_items i WHERE i.order_no = o.order_no))),
      (2, 'NOTIFY_SMS', jsonb_build_object(
          'template', 'order_paid'::text, 'userId', o.user_id, 'orderNo', o.order_no,
          'params', jsonb_build_object('amountCents', o.amount_cents)))
  ) AS e(ord, type, payload)
  WHERE o.order_no = 'PGB-' || :n
  ORDER BY o.order_no, e.ord;
UPDATE payment_receipts SET outcome = 'APPLIED', order_status = 'PAID'
  WHERE channel = 'pgbench' AND txn_id = 'PGB-' || :n;
END;

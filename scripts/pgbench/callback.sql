-- One payment callback, the way the service does it per callback without group commit:
-- claim the receipt, one conditional UPDATE through the gate, the transition log row.
-- Each transaction pays a distinct pending order (bench_seq), so every UPDATE wins.
SELECT nextval('bench_seq') AS n \gset
BEGIN;
INSERT INTO payment_receipts (channel, txn_id, order_no, amount_cents, gateway_status, outcome, order_status)
  VALUES ('pgbench', 'PGB-' || :n, 'PGB-' || :n, 100, 'SUCCESS', 'APPLIED', 'PAID')
  ON CONFLICT (channel, txn_id) DO NOTHING;
UPDATE orders SET status = 'PAID', paid_at = now(), paid_channel = 'pgbench', paid_txn_id = 'PGB-' || :n,
                  closed_by = 'PAYMENT_CALLBACK'
  WHERE order_no = 'PGB-' || :n AND status = 'PENDING_PAYMENT' AND amount_cents = 100;
INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
  VALUES ('PGB-' || :n, 'PENDING_PAYMENT', 'PAID', 'PAYMENT_CALLBACK', 'pgbench', 'PGB-' || :n);
END;

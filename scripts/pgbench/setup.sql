-- Pending orders for callback.sql: PGB-1 .. PGB-:count, on a database migrated by the service.
-- psql -v count=N -f setup.sql
DROP SEQUENCE IF EXISTS bench_seq;
CREATE SEQUENCE bench_seq;
INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
SELECT 'PGB-' || g, 'bench', 'PENDING_PAYMENT', 100, 'pgbench', now() + interval '1 day'
FROM generate_series(1, :count) g
ON CONFLICT (order_no) DO NOTHING;
ANALYZE orders;

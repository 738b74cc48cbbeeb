-- Item 3's data: :n overdue pending orders as the API would have left them (the same shape as
-- src/test/java/dev/ordergate/sweep/SweepFixtures.pendingOrders(..., full = true)): two items each
-- (SW-A x1, SW-B x2, stock already taken), every second order with a LOCKED coupon, a creation
-- transition; expired a minute ago, one microsecond apart. psql -v n=100000 -f sweep-fixture.sql
INSERT INTO inventory (sku, available) VALUES ('SW-A', 0), ('SW-B', 0) ON CONFLICT (sku) DO NOTHING;
INSERT INTO orders (order_no, user_id, status, amount_cents, coupon_code, request_hash, expires_at)
SELECT 'SW' || g, 'su-SW' || g, 'PENDING_PAYMENT', 1000,
       CASE WHEN g % 2 = 0 THEN 'SW-C' || g END, 'fixture',
       now() - interval '60 seconds' + g * interval '1 microsecond'
FROM generate_series(1, :n) g;
INSERT INTO order_items (order_no, sku, qty, unit_price_cents)
SELECT 'SW' || g, s.sku, s.qty, s.price
FROM generate_series(1, :n) g, (VALUES ('SW-A', 1, 500), ('SW-B', 2, 250)) AS s(sku, qty, price);
INSERT INTO coupons (code, user_id, discount_cents, status, order_no)
SELECT 'SW-C' || g, 'su-SW' || g, 0, 'LOCKED', 'SW' || g FROM generate_series(2, :n, 2) g;
INSERT INTO order_transitions (order_no, from_status, to_status, source, actor, reference)
SELECT 'SW' || g, NULL, 'PENDING_PAYMENT', 'USER', 'su-SW' || g, 'create' FROM generate_series(1, :n) g;

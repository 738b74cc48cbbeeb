-- What a sweep left behind, to check that the service and the SQL script did the same work.
SELECT (SELECT count(*) FROM orders WHERE status = 'CANCELLED' AND closed_by = 'TIMEOUT_SWEEP') || ' cancelled, '
    || (SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT') || ' pending, '
    || (SELECT count(*) FROM inventory_ledger WHERE kind = 'RETURN') || ' RETURN rows, '
    || (SELECT coalesce(sum(available), 0) FROM inventory) || ' stock, '
    || (SELECT count(*) FROM coupons WHERE status = 'AVAILABLE' AND order_no IS NULL) || ' coupons released, '
    || (SELECT count(*) FROM coupons WHERE status = 'LOCKED') || ' locked, '
    || (SELECT count(*) FROM order_transitions WHERE to_status = 'CANCELLED') || ' transitions, '
    || (SELECT count(*) FROM outbox_events WHERE type = 'ORDER_CANCELLED') || ' ORDER_CANCELLED, '
    || (SELECT count(*) FROM outbox_events WHERE type = 'NOTIFY_SMS') || ' NOTIFY_SMS';

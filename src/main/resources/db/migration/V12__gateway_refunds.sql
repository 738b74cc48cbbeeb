-- Refunds through the gateways (issue 10). An automatic refund of a gateway channel (wechatpay-v3, alipay,
-- stripe) is made at the gateway's own refund API by the outbox (REFUND_REQUESTED, refund id = the event
-- id). The gateway may accept a refund and settle it later (WeChat Pay PROCESSING, Stripe pending, Alipay
-- fund_change N not yet confirmed): the exception then waits in REFUND_PROCESSING until the gateway's
-- refund notification or a refund query says REFUNDED or REFUND_FAILED. Lists in full, as V3 and V7 do.
ALTER TABLE exception_orders DROP CONSTRAINT exception_orders_status_check;
ALTER TABLE exception_orders ADD CONSTRAINT exception_orders_status_check CHECK (status IN
    ('OPEN', 'MANUAL_REVIEW', 'REFUND_PENDING', 'REFUND_PROCESSING', 'REFUNDED', 'REFUND_FAILED', 'RESOLVED'));

-- REFUND_ACCEPTED: the gateway accepted the refund and settles it later (REFUND_PENDING -> REFUND_PROCESSING).
-- REFUND_NOTIFIED: a refund notification or query that changed nothing (a repeat, or after the exception
-- was settled or resolved), kept as proof with its detail.
ALTER TABLE exception_history DROP CONSTRAINT exception_history_event_check;
ALTER TABLE exception_history ADD CONSTRAINT exception_history_event_check CHECK (event IN
    ('OPENED', 'MANUAL_REVIEW', 'REFUND_REQUESTED', 'REFUND_CONFIRMED', 'REFUND_FAILED', 'REFUND_RETRIED', 'RESOLVED',
     'REFUND_ACCEPTED', 'REFUND_NOTIFIED'));

-- The refund query finds the exceptions still waiting for their gateway, oldest first.
CREATE INDEX exception_orders_refund_processing ON exception_orders (updated_at) WHERE status = 'REFUND_PROCESSING';

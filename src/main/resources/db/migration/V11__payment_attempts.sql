-- Payment attempts (issue 10): a payment opened at a gateway for an order, one per (order, channel),
-- stored only after the gateway answered (there is no half-made row). close-before-cancel keeps the
-- attempt's state: OPEN until it is closed at the gateway (CLOSED), found paid there (PAID), or given up
-- (UNCLOSED: the gateway stayed unreachable past payments.closeDeferMaxSeconds, or bestEffort).
CREATE TABLE payment_attempts (
    id                  bigserial PRIMARY KEY,
    order_no            text NOT NULL REFERENCES orders (order_no),
    channel             text NOT NULL,
    kind                text NOT NULL,
    gateway_reference   text NOT NULL,
    state               text NOT NULL CHECK (state IN ('OPEN', 'CLOSED', 'PAID', 'UNCLOSED')),
    amount_cents        bigint NOT NULL CHECK (amount_cents >= 0),
    currency            text NOT NULL,
    client_field        text NOT NULL,
    client_value        text NOT NULL,
    gateway_expires_at  timestamptz NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    closed_at           timestamptz,
    paid_txn_id         text,
    close_failures      integer NOT NULL DEFAULT 0,
    close_failing_since timestamptz,
    last_close_error    text CHECK (last_close_error IS NULL OR length(last_close_error) <= 500),
    UNIQUE (order_no, channel),
    CHECK ((state = 'PAID') = (paid_txn_id IS NOT NULL))
);
-- The sweep's claim skips orders with an open attempt; the close pass finds them.
CREATE INDEX payment_attempts_open ON payment_attempts (order_no) WHERE state = 'OPEN';

-- A payment found by querying the gateway (close before cancel) is applied under its own source.
-- Listed in full (TIMEOUT_MESSAGE is the broker tier's, V7) so that V7 and this migration apply in
-- either history: each drops and re-creates the whole list.
ALTER TABLE order_transitions DROP CONSTRAINT order_transitions_source_check;
ALTER TABLE order_transitions ADD CONSTRAINT order_transitions_source_check
    CHECK (source IN ('USER', 'OPERATOR', 'TIMEOUT_SWEEP', 'PAYMENT_CALLBACK', 'TIMEOUT_MESSAGE', 'PAYMENT_QUERY'));

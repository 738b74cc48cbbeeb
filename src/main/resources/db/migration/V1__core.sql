-- Core schema: orders, their items, stock with its ledger, coupons, the transition log,
-- payment receipts and exception orders. Amounts are integer cents; times are the database's.

CREATE TABLE inventory (
    sku        text PRIMARY KEY,
    available  integer NOT NULL CHECK (available >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every stock change, in the transaction that made it: SUM(delta) per SKU = available.
CREATE TABLE inventory_ledger (
    id       bigserial PRIMARY KEY,
    sku      text NOT NULL,
    delta    integer NOT NULL,
    kind     text NOT NULL CHECK (kind IN ('SET', 'TAKE', 'RETURN')),
    order_no text,
    actor    text,
    at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX inventory_ledger_sku ON inventory_ledger (sku);
CREATE INDEX inventory_ledger_order ON inventory_ledger (order_no) WHERE order_no IS NOT NULL;

CREATE TABLE orders (
    order_no      text PRIMARY KEY,
    user_id       text NOT NULL,
    status        text NOT NULL CHECK (status IN ('PENDING_PAYMENT', 'PAID', 'CANCELLED')),
    amount_cents  bigint NOT NULL CHECK (amount_cents >= 0),
    coupon_code   text,
    request_hash  text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    paid_at       timestamptz,
    cancelled_at  timestamptz,
    paid_channel  text,
    paid_txn_id   text,
    closed_by     text,
    CHECK ((status = 'PAID') = (paid_at IS NOT NULL AND paid_txn_id IS NOT NULL)),
    CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL))
);
-- The timeout sweep's claim: only pending orders are in it, so its size is the backlog.
CREATE INDEX orders_pending_expiry ON orders (expires_at) WHERE status = 'PENDING_PAYMENT';

CREATE TABLE order_items (
    order_no         text NOT NULL REFERENCES orders (order_no),
    sku              text NOT NULL,
    qty              integer NOT NULL CHECK (qty > 0),
    unit_price_cents bigint NOT NULL CHECK (unit_price_cents >= 0),
    PRIMARY KEY (order_no, sku)
);

CREATE TABLE coupons (
    code           text PRIMARY KEY,
    user_id        text NOT NULL,
    discount_cents bigint NOT NULL CHECK (discount_cents >= 0),
    status         text NOT NULL CHECK (status IN ('AVAILABLE', 'LOCKED', 'USED')),
    order_no       text,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'AVAILABLE') = (order_no IS NULL))
);

CREATE TABLE order_transitions (
    id          bigserial PRIMARY KEY,
    order_no    text NOT NULL REFERENCES orders (order_no),
    from_status text,
    to_status   text NOT NULL,
    source      text NOT NULL CHECK (source IN ('USER', 'OPERATOR', 'TIMEOUT_SWEEP', 'PAYMENT_CALLBACK')),
    actor       text,
    reference   text,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_transitions_order ON order_transitions (order_no, id);
-- The one-way gate, stated once more by the database: one exit from PENDING_PAYMENT per order.
CREATE UNIQUE INDEX order_transitions_one_exit ON order_transitions (order_no)
    WHERE from_status = 'PENDING_PAYMENT';

-- One row per (channel, txn id): the idempotency key of a callback and its first answer.
CREATE TABLE payment_receipts (
    id             bigserial PRIMARY KEY,
    channel        text NOT NULL,
    txn_id         text NOT NULL,
    order_no       text NOT NULL,
    amount_cents   bigint NOT NULL,
    gateway_status text NOT NULL,
    outcome        text,
    order_status   text,
    received_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (channel, txn_id)
);
CREATE INDEX payment_receipts_order ON payment_receipts (order_no);

-- Money we received but did not apply: never silently kept.
CREATE TABLE exception_orders (
    id           bigserial PRIMARY KEY,
    order_no     text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('LATE_AFTER_CANCEL', 'DOUBLE_PAYMENT', 'AMOUNT_MISMATCH', 'UNKNOWN_ORDER')),
    channel      text NOT NULL,
    txn_id       text NOT NULL,
    amount_cents bigint NOT NULL,
    status       text NOT NULL DEFAULT 'OPEN',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (channel, txn_id)
);
CREATE INDEX exception_orders_status ON exception_orders (status, id);

-- The timeout sweep's run log: one row per run, written when the run starts and completed when
-- it ends. finished_at IS NULL means the run never ended (the process stopped mid-run); error
-- set means it stopped early: its committed batches stay done, the rest is left to the next run.
CREATE TABLE sweep_runs (
    id          bigserial PRIMARY KEY,
    instance_id text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    batches     integer NOT NULL DEFAULT 0,
    claimed     integer NOT NULL DEFAULT 0,
    cancelled   integer NOT NULL DEFAULT 0,
    error       text
);
-- Retention pruning deletes by age.
CREATE INDEX sweep_runs_started ON sweep_runs (started_at);

-- Cancellation (and payment) find an order's coupon by order_no = ANY($1::text[]). Without an
-- index that is a sequential scan of every coupon per batch: measured at 50,000 coupons and a
-- batch of 500, 10 ms with a custom plan and 270 ms with a generic plan; with this index, 3 ms.
CREATE INDEX coupons_order_no ON coupons (order_no) WHERE order_no IS NOT NULL;

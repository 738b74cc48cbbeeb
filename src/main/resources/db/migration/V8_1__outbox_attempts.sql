-- Each delivery attempt of an outbox event, for the console's attempt list (issue 11): when, which
-- relay, the outcome and the error. Written by a trigger in the transaction that marks the attempt
-- (the relay's own statements are unchanged): an attempt ends when its claim is cleared and the
-- event's status or next attempt time changes (a claim given back unattempted, RELEASE, changes
-- neither). Events delivered at the first try are not logged (the event row says it all), except
-- refund requests.
CREATE TABLE outbox_attempts (
    id       bigserial PRIMARY KEY,
    event_id uuid NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
    attempt  integer NOT NULL,
    relay    text,
    outcome  text NOT NULL CHECK (outcome IN ('DELIVERED', 'RETRY', 'DEAD')),
    error    text,
    at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_attempts_event ON outbox_attempts (event_id, id);

CREATE FUNCTION outbox_attempt_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO outbox_attempts (event_id, attempt, relay, outcome, error)
    VALUES (NEW.id, NEW.attempts, OLD.claimed_by,
            CASE NEW.status WHEN 'DELIVERED' THEN 'DELIVERED' WHEN 'DEAD' THEN 'DEAD' ELSE 'RETRY' END,
            CASE WHEN NEW.status = 'DELIVERED' THEN NULL ELSE NEW.last_error END);
    RETURN NULL;
END $$;

CREATE TRIGGER outbox_attempt_log AFTER UPDATE ON outbox_events FOR EACH ROW
    WHEN (OLD.claim_token IS NOT NULL AND NEW.claim_token IS NULL
          AND (NEW.status <> OLD.status OR NEW.next_attempt_at IS DISTINCT FROM OLD.next_attempt_at)
          AND (NEW.status <> 'DELIVERED' OR NEW.exception_id IS NOT NULL OR NEW.attempts > 1))
    EXECUTE FUNCTION outbox_attempt_log();

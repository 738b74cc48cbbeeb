-- The operator console (issue 11): server-side sessions, the login throttle and the audit log.

-- One row per signed-in browser. The cookie carries a random token; only its SHA-256 is stored, so a
-- copy of this table signs nobody in. Every instance reads the same rows: a session works on all of
-- them and ends everywhere at once (logout deletes the row). account_tag is a digest of the
-- operator's password hash when the session began: changing the password ends the old sessions.
CREATE TABLE operator_sessions (
    token_hash   text PRIMARY KEY,
    operator     text NOT NULL,
    account_tag  text NOT NULL,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX operator_sessions_expiry ON operator_sessions (expires_at);

-- Consecutive failed logins per account name (known or not), shared by every instance: past the
-- limit, attempts are refused without checking the password until the back-off has passed.
CREATE TABLE operator_login_failures (
    operator       text PRIMARY KEY,
    failures       integer NOT NULL,
    last_failed_at timestamptz NOT NULL DEFAULT now()
);

-- Every operator action (login, logout, close, resolve, retry, run now, stock, coupon). The row is
-- written before the action runs (result NULL) and completed after it: a row left without a result
-- means the process stopped while the action ran (see the order or exception itself for its effect).
CREATE TABLE audit_log (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    operator    text NOT NULL,
    via         text NOT NULL CHECK (via IN ('SESSION', 'TOKEN', 'LOGIN')),
    client      text,
    action      text NOT NULL,
    target      text,
    detail      text,
    result      text,
    message     text,
    finished_at timestamptz
);
CREATE INDEX audit_log_operator ON audit_log (operator, id);
CREATE INDEX audit_log_action ON audit_log (action, id);

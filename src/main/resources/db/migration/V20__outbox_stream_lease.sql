-- Issue 13: a cursor batch that goes to webhooks is POSTed outside any transaction, under a lease on the
-- position, as the claim path's deliveries are under a lease on their events: no network call runs while a
-- transaction is open or a row lock is held. A relay takes the lease (a token and an end) in the transaction that
-- reads the batch, POSTs, and moves the position in a second transaction only while its token is still there; a
-- relay that died leaves the lease to run out (outbox.leaseMs), and the next relay delivers the batch again (at
-- least once). No relay reads past a position under a lease that has not run out.
ALTER TABLE outbox_stream ADD COLUMN lease_token uuid, ADD COLUMN lease_until timestamptz;

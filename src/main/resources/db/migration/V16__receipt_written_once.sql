-- Issue 13: a batch of first payments now claims its receipts and goes through the gate in one statement
-- (Sql.CLAIM_AND_PAY), and a receipt is inserted with the answer APPLIED. Only a callback that does not win
-- updates its receipt (the answer corrected in the same transaction), so the free half of each page that
-- V15 kept for the outcome's update is no longer used by the common path. Receipts are kept for good (they
-- are the idempotency keys), so the table goes back to full pages; pages written before this keep their
-- free space until they are rewritten.
ALTER TABLE payment_receipts RESET (fillfactor);

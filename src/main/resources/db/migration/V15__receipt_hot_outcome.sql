-- Issue 13: a receipt is written twice in its callback's transaction: inserted when the callback claims
-- its transaction id (NOTE_AND_CLAIM), then updated with the outcome (PAY_ORDERS or RECORD_OUTCOMES). The
-- receipts are inserted one after the other, so at the default fillfactor each page was full before any of
-- its rows was updated, and 58 to 62 % of those updates went to another page: a non-HOT update, with a new
-- entry in each of the table's three indexes (relay-on closed loop, 0.98 updates per callback, 0.38 to 0.42
-- HOT). With half of each page left free for the update, 0.96 to 0.97 are HOT. The table takes up to twice
-- the pages it did; once the callbacks have committed the old versions are pruned in place and the space
-- is reused by the same page's later updates.
ALTER TABLE payment_receipts SET (fillfactor = 50);

-- Issue 13: a batch of first payments is one statement with no BEGIN or COMMIT around it (Sql.CLAIM_AND_PAY_ALL).
-- Such a statement is its own transaction, so it must undo itself when any of its callbacks does not win the gate
-- (a receipt claimed before, an order cancelled, paid or of another amount): it ends by calling this function,
-- which raises OG001 unless every callback was claimed and let through. The error undoes the whole statement,
-- receipts, notifications, the gate's UPDATE and its side effects, and the service runs the batch again in a
-- transaction of its own, where the losers are told apart and answered.
CREATE FUNCTION gate_all_won(won bigint, asked integer) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF won IS DISTINCT FROM asked THEN
    RAISE EXCEPTION USING ERRCODE = 'OG001',
      MESSAGE = format('%s of %s callbacks won the gate; the batch goes again in a transaction', won, asked);
  END IF;
  RETURN true;
END
$$;

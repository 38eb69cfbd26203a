-- A top-up's Idempotency-Key is inserted naming the order its request creates later in the same
-- transaction (src/topups/submit-topup.ts), so the key's foreign key to that order is checked at
-- COMMIT. The key used to be inserted unlinked and updated once the order was in: a statement and
-- a row version (in three of the table's four indexes) fewer per top-up with a key.
alter table idempotency_keys
  alter constraint idempotency_keys_order_id_fkey deferrable initially deferred;

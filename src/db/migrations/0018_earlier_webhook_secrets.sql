-- A second rotation within a first one's 24 hours used to drop the first's previous secret at once:
-- `previous_secret_sealed` held one secret, and the next rotation overwrote it with the secret the
-- first rotation had minted. A receiver still verifying with the first (the new one not yet
-- deployed, or lost and rotated again) then failed every delivery, though the contract had given
-- that secret 24 hours. Now each replaced secret signs until 24 hours after its own replacement:
-- the newest stays in previous_secret_* (what the previous release reads and signs with, so a
-- rolling deploy signs as before), the older ones still within their 24 hours move here, newest
-- first, as {"sealed", "expires_at"}. At most three here: five signatures at once, from four
-- rotations in 24 hours; a fifth drops the oldest (src/webhooks/endpoints.sql.ts, rotateSecret and
-- MAX_EARLIER_SECRETS, which this CHECK repeats).
-- Adding a column with a constant default rewrites nothing; the CHECK reads the endpoints (at most
-- ten per partner) under the table's lock.
alter table webhook_endpoints
  add column earlier_secrets jsonb not null default '[]'
    check (jsonb_typeof(earlier_secrets) = 'array' and jsonb_array_length(earlier_secrets) <= 3);

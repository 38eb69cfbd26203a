-- All a top-up with an Idempotency-Key records today, row for row, with the least SQL: the top-up's
-- reference, as purchase-full.sql is the purchase's (no target of its own; the issue's limit for
-- both is purchase.sql). In the service's transactions (src/topups/submit-topup.ts, drive-order.ts):
-- - the reserve: the reads the writes need (the eSIM, whose package is topped up; the package's
--   price); the hold and its pending transfer, as purchase.sql does them; the pending order; the key
--   inserted running, naming its order;
-- - the carrier's records: the simulator's own function, carrier_sim.top_up, in a transaction of its
--   own between the two, as the carrier call is (its top-up, the profile's total and a queued
--   bundle). The simulator's check of the eSIM's bundles after it (lifecycle.ts advance) is left out:
--   it writes nothing unless a bundle lapsed;
-- - the completion: the eSIM made due for a pull, the order's update with its purchase and bundle
--   rows folded in as the service does, the posting as in purchase.sql, the order.completed event
--   and the key's stored answer (each a JSON document of an Order's size);
-- - what runs after it in the service's sweeps: the event stamped dispatched with its webhook
--   delivery, the delivery leased and marked succeeded (no email: a top-up sends none). Here in the
--   completion's transaction, as in purchase-full.sql, and for the same reasons.
-- Left out as in purchase-full.sql: the NOTIFYs, the claims' locks, what the service reads to answer.
-- Its hold and posting are purchase.sql's, its event and delivery statements purchase-full.sql's,
-- verbatim (each script stays a file pgbench runs as it is): change them in every script.
--
-- Each client is one partner with one eSIM, bought before the run by one purchase-full.sql
-- transaction on its cart pgb_<client_id * 1000000 + 900001> (setup.sql), so its ICCID is
-- 8999<that number, 15 digits>; it is topped up again and again, as the bench's top-up scenario
-- tops up one eSIM per partner. Top-up orders and keys are numbered client_id * 1000000 + 700000 + n.
-- The harness marks these eSIMs deleted before the run, so the service's pull sync never claims them
-- (its partial index leaves deleted eSIMs out): pulls would be the service's work, charged to this.
-- Variables (-D): n=0, price, revenue, external, data_mb, validity_days.
\set n :n + 1
\set k :client_id * 1000000 + 700000 + :n
\set e :client_id * 1000000 + 900001
BEGIN;
\if :listed
DELETE FROM pending_orders WHERE order_id = 'ord_pgb_' || CAST(:k AS text);
\endif
SELECT iccid, partner_id, order_id, package_id, smdp_address, activation_code
FROM esims WHERE iccid = '8999' || lpad(CAST(:e AS text), 15, '0');
SELECT package_id, external_package_id, data_mb, validity_days, wholesale_minor, currency
FROM packages WHERE package_id = 'fr-1gb-7d';
UPDATE ledger_accounts SET pending_debits_minor = pending_debits_minor + :price
WHERE partner_id = 'ptr_pgb_' || CAST(:client_id AS text) AND kind = 'partner_wallet'
  AND posted_credits_minor - posted_debits_minor - pending_debits_minor >= :price
RETURNING account_id, currency;
INSERT INTO ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
VALUES ('trf_pgb_' || CAST(:k AS text), 'acc_pgb_' || CAST(:client_id AS text), :revenue, :price, 'USD',
        'purchase', 'pending', 'ord_pgb_' || CAST(:k AS text));
-- Since migration 0046 a top-up names its eSIM in topup_iccid too and is listed as pending;
-- :listed is 0 on a tree before it.
\if :listed
INSERT INTO orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, data_mb,
                    validity_days, start_date, total_minor, currency, client_reference, email, phone, first_name,
                    last_name, iccid, topup_iccid, lease_until, lease_token)
VALUES ('ord_pgb_' || CAST(:k AS text), 'ptr_pgb_' || CAST(:client_id AS text), 'topup', 'pending', NULL,
        'fr-1gb-7d', :external, :data_mb, :validity_days, NULL, :price, 'USD', NULL, 'ana@example.com',
        '+14155550123', 'Ana', 'Lima', '8999' || lpad(CAST(:e AS text), 15, '0'), '8999' || lpad(CAST(:e AS text), 15, '0'),
        clock_timestamp() + make_interval(secs => 31), 'lease_pgb_' || CAST(:k AS text));
INSERT INTO pending_orders (order_id, created_at) VALUES ('ord_pgb_' || CAST(:k AS text), now());
\else
INSERT INTO orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, data_mb,
                    validity_days, start_date, total_minor, currency, client_reference, email, phone, first_name,
                    last_name, iccid, lease_until, lease_token)
VALUES ('ord_pgb_' || CAST(:k AS text), 'ptr_pgb_' || CAST(:client_id AS text), 'topup', 'pending', NULL,
        'fr-1gb-7d', :external, :data_mb, :validity_days, NULL, :price, 'USD', NULL, 'ana@example.com',
        '+14155550123', 'Ana', 'Lima', '8999' || lpad(CAST(:e AS text), 15, '0'),
        clock_timestamp() + make_interval(secs => 31), 'lease_pgb_' || CAST(:k AS text));
\endif
-- The key last, the same row as the service's claim first: its foreign key is then met whether it is
-- checked at once or at COMMIT (migration 0016), so the script runs against an older tree too.
INSERT INTO idempotency_keys (partner_id, idempotency_key, fingerprint, state, order_id, request_id, expires_at)
VALUES ('ptr_pgb_' || CAST(:client_id AS text), 'key_pgb_' || CAST(:k AS text), decode(repeat('07', 32), 'hex'),
        'running', 'ord_pgb_' || CAST(:k AS text), 'req_pgb_' || CAST(:k AS text), now() + interval '24 hours')
ON CONFLICT (partner_id, idempotency_key) DO NOTHING
RETURNING true AS inserted;
COMMIT;
SELECT kind, iccid, data_mb_total FROM carrier_sim.top_up('ord_pgb_' || CAST(:k AS text),
       '8999' || lpad(CAST(:e AS text), 15, '0'), :external, CAST(:data_mb AS bigint), :validity_days, NULL);
BEGIN;
UPDATE esims SET next_sync_at = now()
WHERE iccid = '8999' || lpad(CAST(:e AS text), 15, '0') AND (next_sync_at IS NULL OR next_sync_at > now());
-- The order completed with its purchase (the eSIM's profile) and its bundle: one statement.
WITH done AS (
  UPDATE orders SET status = 'completed', resolved_at = now(), lease_until = NULL
  WHERE order_id = 'ord_pgb_' || CAST(:k AS text) AND status = 'pending'
  RETURNING order_id, seq, partner_id, package_id, iccid, data_mb, validity_days, start_date
), purchase AS (
  INSERT INTO purchases (order_id, position, package_id, iccid, smdp_address, activation_code, start_date)
  SELECT d.order_id, 0, d.package_id, e.iccid, e.smdp_address, e.activation_code, d.start_date
  FROM done d JOIN esims e ON e.iccid = d.iccid
  RETURNING order_id
), bundle AS (
  INSERT INTO esim_bundles (order_id, iccid, position, package_id, name, data_mb, validity_days)
  SELECT d.order_id, d.iccid, d.seq, d.package_id, k.name, d.data_mb, d.validity_days
  FROM done d JOIN packages k ON k.package_id = d.package_id
  RETURNING iccid
)
SELECT (SELECT count(*) FROM purchase) + (SELECT count(*) FROM bundle) AS rows_written;
UPDATE ledger_transfers SET state = 'posted', resolved_at = clock_timestamp(), posted_seq = nextval('ledger_posted_seq'),
       wallet_balance_after_minor = (SELECT posted_credits_minor - posted_debits_minor - :price FROM ledger_accounts
                                     WHERE account_id = 'acc_pgb_' || CAST(:client_id AS text))
WHERE reference = 'ord_pgb_' || CAST(:k AS text) AND kind = 'purchase' AND state = 'pending'
RETURNING debit_account_id, amount_minor;
UPDATE ledger_accounts SET pending_debits_minor = pending_debits_minor - :price,
                           posted_debits_minor = posted_debits_minor + :price
WHERE account_id = 'acc_pgb_' || CAST(:client_id AS text);
-- The Order as the event and the key's stored answer carry it (~720 characters, as in
-- purchase-full.sql). No colon right before a letter or digit inside a literal (pgbench variables).
WITH x AS (
  SELECT '{"orderID":"ord_pgb_' || CAST(:k AS text) || '","type":"topup","status":"completed",'
         || '"total":{"amount":"3.50","currency":"USD"},"client_reference": null,'
         || '"created_at":"' || at || '","resolved_at":"' || at || '","refunded_at": null,'
         || '"purchases":[{"package_id":"fr-1gb-7d","iccid":"8999' || lpad(CAST(:e AS text), 15, '0') || '",'
         || '"start_date": null,"smdp_address":"smdp.sandbox.esim.example","activation_code":"K2-PGB-'
         || CAST(:e AS text) || '","qr_code":"' || lpa || '","install":{"ios":"https'
         || chr(58) || '//esimsetup.apple.com/esim_qrcode_provisioning?carddata=' || lpa || '",'
         || '"android":"https' || chr(58) || '//esimsetup.android.com/esim_qrcode_provisioning?carddata='
         || lpa || '"}}]}' AS body
  FROM (SELECT 'LPA' || chr(58) || '1$smdp.sandbox.esim.example$K2-PGB-' || CAST(:e AS text) AS lpa,
               to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24' || chr(58) || 'MI' || chr(58) || 'SS.MS"Z"') AS at) AS t
), event AS (
  INSERT INTO events (event_id, partner_id, type, data, dedup_key, dispatched_at)
  SELECT 'evt_pgb_' || CAST(:k AS text), 'ptr_pgb_' || CAST(:client_id AS text), 'order.completed',
         CAST(body AS jsonb), NULL, NULL
  FROM x
  ON CONFLICT (partner_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
  RETURNING event_id
)
UPDATE idempotency_keys SET state = 'completed', response_status = 200, response_body = (SELECT body FROM x),
       expires_at = greatest(expires_at, now() + interval '24 hours')
WHERE order_id = 'ord_pgb_' || CAST(:k AS text) AND state = 'running' AND (SELECT count(*) FROM event) = 1;
-- After the top-up (dispatch-events.ts, deliver-webhooks.ts), as in purchase-full.sql.
WITH dispatched AS (
  UPDATE events SET dispatched_at = now() WHERE event_id = 'evt_pgb_' || CAST(:k AS text) AND dispatched_at IS NULL
  RETURNING event_id, partner_id, type
)
INSERT INTO webhook_deliveries (delivery_id, endpoint_id, partner_id, event_id, event_type, next_attempt_at)
SELECT 'dlv_pgb_' || CAST(:k AS text), 'whe_pgb_' || CAST(:client_id AS text), partner_id, event_id, type, now()
FROM dispatched
ON CONFLICT (endpoint_id, event_id) DO NOTHING;
UPDATE webhook_deliveries SET leased_until = clock_timestamp() + interval '30 seconds',
       lease_token = 'lease_pgb_' || CAST(:k AS text), attempts = attempts + 1, last_attempt_at = now()
WHERE delivery_id = 'dlv_pgb_' || CAST(:k AS text);
UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, last_response_status = 204,
       last_error = NULL, leased_until = NULL, lease_token = NULL
WHERE delivery_id = 'dlv_pgb_' || CAST(:k AS text) AND lease_token = 'lease_pgb_' || CAST(:k AS text);
COMMIT;

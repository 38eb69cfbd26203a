-- All a purchase records today, row for row, with the least SQL: a reference beside
-- purchase.sql (the least SQL a purchase must run, the issue's limit), so that the service's figure
-- can also be read against the bare cost of what it records. On top of purchase.sql:
-- - the carrier's records: the simulator's own function, carrier_sim.provision_profile, in a
--   transaction of its own between the two, as the carrier call is (its profile and queued bundle);
-- - in the completion: the eSIM, its purchase and its bundle (the package's name read for it), the
--   email outbox row, folded into the order's update as the service does, then the posting as in
--   purchase.sql and the order.completed event (a JSON document of an Order's size);
-- - what runs after the purchase, in the service's sweeps and in batches there: the event stamped
--   dispatched, its webhook delivery inserted, leased and marked succeeded; the email claimed, the
--   order read for it, the outbox row deleted and the delivery recorded. Here in the completion's
--   transaction, so that the service's own sweeps never see a row to claim (the endpoints are
--   disabled too) and no commit is paid for them: the service commits each batch for many
--   purchases. Reads are what the writes need (the cart, the package's name, the order for the
--   email); what the service reads to answer, render or decide is not counted, nor its other
--   per-batch work: the NOTIFY that wakes the delivery loops, the claims' advisory lock and row
--   locks, the simulator's ICCID serials (drawn 64 at a time).
--
-- Its first transaction and its posting are purchase.sql's, verbatim (each script stays a file
-- pgbench runs as it is): change them in both, and the hold and posting in topup-full.sql too.
-- One pgbench "transaction" is one whole purchase.
-- Each client is one partner, as in purchase.sql, with a disabled webhook endpoint of its own
-- (setup.sql); its carts are pgb_<client_id * 1000000 + 500000 + n>, apart from purchase.sql's.
-- ICCIDs are 8999<k, 15 digits>, outside the simulator's 8901260 range. Variables (-D): n=0,
-- price, revenue, external, data_mb, validity_days.
\set n :n + 1
\set k :client_id * 1000000 + 500000 + :n
BEGIN;
\if :listed
DELETE FROM pending_orders WHERE order_id = 'ord_pgb_' || CAST(:k AS text);
\endif
SELECT cart_key, partner_id, package_id, external_package_id, data_mb, validity_days, start_date, total_minor,
       currency, created_at, expires_at, expires_at <= now() AS expired,
       start_date < (now() AT TIME ZONE 'UTC')::date AS start_date_passed
FROM carts WHERE cart_key = 'pgb_' || CAST(:k AS text) AND partner_id = 'ptr_pgb_' || CAST(:client_id AS text)
FOR UPDATE;
INSERT INTO orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, data_mb,
                    validity_days, start_date, total_minor, currency, client_reference, email, phone, first_name,
                    last_name, iccid, lease_until, lease_token)
VALUES ('ord_pgb_' || CAST(:k AS text), 'ptr_pgb_' || CAST(:client_id AS text), 'esim', 'pending',
        'pgb_' || CAST(:k AS text), 'fr-1gb-7d', :external, :data_mb, :validity_days, NULL, :price, 'USD', NULL,
        'ana@example.com', '+14155550123', 'Ana', 'Lima', NULL, clock_timestamp() + make_interval(secs => 31),
        'lease_pgb_' || CAST(:k AS text));
-- The resolver's list of pending orders (migration 0046); :listed is 0 on a tree before it.
\if :listed
INSERT INTO pending_orders (order_id, created_at) VALUES ('ord_pgb_' || CAST(:k AS text), now());
\endif
UPDATE ledger_accounts SET pending_debits_minor = pending_debits_minor + :price
WHERE partner_id = 'ptr_pgb_' || CAST(:client_id AS text) AND kind = 'partner_wallet'
  AND posted_credits_minor - posted_debits_minor - pending_debits_minor >= :price
RETURNING account_id, currency;
INSERT INTO ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
VALUES ('trf_pgb_' || CAST(:k AS text), 'acc_pgb_' || CAST(:client_id AS text), :revenue, :price, 'USD',
        'purchase', 'pending', 'ord_pgb_' || CAST(:k AS text));
COMMIT;
SELECT kind, iccid FROM carrier_sim.provision_profile('ord_pgb_' || CAST(:k AS text),
       '8999' || lpad(CAST(:k AS text), 15, '0'), 'K2-PGB-' || CAST(:k AS text), 'smdp.sandbox.esim.example',
       :external, CAST(:data_mb AS bigint), :validity_days, NULL, 'ana@example.com', NULL);
BEGIN;
-- The order completed with its eSIM, purchase, bundle and email outbox row: one statement.
WITH done AS (
  UPDATE orders SET status = 'completed', iccid = '8999' || lpad(CAST(:k AS text), 15, '0'), resolved_at = now(),
                    lease_until = NULL
  WHERE order_id = 'ord_pgb_' || CAST(:k AS text) AND status = 'pending'
  RETURNING order_id, partner_id, package_id, iccid, data_mb, validity_days, start_date
), esim AS (
  INSERT INTO esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code, next_sync_at)
  SELECT iccid, partner_id, order_id, package_id, 'smdp.sandbox.esim.example', 'K2-PGB-' || CAST(:k AS text),
         now() + interval '1 hour'
  FROM done
  RETURNING iccid
), purchase AS (
  INSERT INTO purchases (order_id, position, package_id, iccid, smdp_address, activation_code, start_date)
  SELECT order_id, 0, package_id, iccid, 'smdp.sandbox.esim.example', 'K2-PGB-' || CAST(:k AS text), start_date
  FROM done
  RETURNING order_id
), bundle AS (
  INSERT INTO esim_bundles (order_id, iccid, position, package_id, name, data_mb, validity_days)
  SELECT d.order_id, d.iccid, 0, d.package_id, k.name, d.data_mb, d.validity_days
  FROM done d JOIN packages k ON k.package_id = d.package_id
  RETURNING iccid
), outbox AS (
  INSERT INTO email_outbox (order_id) SELECT order_id FROM done RETURNING order_id
)
SELECT (SELECT count(*) FROM esim) + (SELECT count(*) FROM purchase) + (SELECT count(*) FROM bundle)
       + (SELECT count(*) FROM outbox) AS rows_written;
UPDATE ledger_transfers SET state = 'posted', resolved_at = clock_timestamp(), posted_seq = nextval('ledger_posted_seq'),
       wallet_balance_after_minor = (SELECT posted_credits_minor - posted_debits_minor - :price FROM ledger_accounts
                                     WHERE account_id = 'acc_pgb_' || CAST(:client_id AS text))
WHERE reference = 'ord_pgb_' || CAST(:k AS text) AND kind = 'purchase' AND state = 'pending'
RETURNING debit_account_id, amount_minor;
UPDATE ledger_accounts SET pending_debits_minor = pending_debits_minor - :price,
                           posted_debits_minor = posted_debits_minor + :price
WHERE account_id = 'acc_pgb_' || CAST(:client_id AS text);
-- A JSON document of an Order's size and shape (~720 characters; render-order.ts writes ~765 with
-- other field names): its parse and storage cost what the service's do.
-- No colon right before a letter or digit inside a literal: pgbench would take it for a variable.
INSERT INTO events (event_id, partner_id, type, data, dedup_key, dispatched_at)
SELECT 'evt_pgb_' || CAST(:k AS text), 'ptr_pgb_' || CAST(:client_id AS text), 'order.completed',
       CAST('{"orderID":"ord_pgb_' || CAST(:k AS text) || '","type":"esim","status":"completed",'
            || '"total":{"amount":"3.50","currency":"USD"},"client_reference": null,'
            || '"created_at":"' || at || '","resolved_at":"' || at || '","refunded_at": null,'
            || '"purchases":[{"package_id":"fr-1gb-7d","iccid":"8999' || lpad(CAST(:k AS text), 15, '0') || '",'
            || '"start_date": null,"smdp_address":"smdp.sandbox.esim.example","activation_code":"K2-PGB-'
            || CAST(:k AS text) || '","qr_code":"' || lpa || '","install":{"ios":"https'
            || chr(58) || '//esimsetup.apple.com/esim_qrcode_provisioning?carddata=' || lpa || '",'
            || '"android":"https' || chr(58) || '//esimsetup.android.com/esim_qrcode_provisioning?carddata='
            || lpa || '"}}]}' AS jsonb), NULL, NULL
FROM (SELECT 'LPA' || chr(58) || '1$smdp.sandbox.esim.example$K2-PGB-' || CAST(:k AS text) AS lpa,
             to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24' || chr(58) || 'MI' || chr(58) || 'SS.MS"Z"') AS at) AS x
ON CONFLICT (partner_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING;
-- After the purchase (dispatch-events.ts, deliver-webhooks.ts, send-confirmation-emails.ts): the event
-- stamped dispatched with its delivery made; the delivery leased with the email claimed (and the
-- order read for it); the delivery's success with the email's delivery recorded.
WITH dispatched AS (
  UPDATE events SET dispatched_at = now() WHERE event_id = 'evt_pgb_' || CAST(:k AS text) AND dispatched_at IS NULL
  RETURNING event_id, partner_id, type
)
INSERT INTO webhook_deliveries (delivery_id, endpoint_id, partner_id, event_id, event_type, next_attempt_at)
SELECT 'dlv_pgb_' || CAST(:k AS text), 'whe_pgb_' || CAST(:client_id AS text), partner_id, event_id, type, now()
FROM dispatched
ON CONFLICT (endpoint_id, event_id) DO NOTHING;
WITH leased AS (
  UPDATE webhook_deliveries SET leased_until = clock_timestamp() + interval '30 seconds',
         lease_token = 'lease_pgb_' || CAST(:k AS text), attempts = attempts + 1, last_attempt_at = now()
  WHERE delivery_id = 'dlv_pgb_' || CAST(:k AS text)
  RETURNING delivery_id
), claimed AS (
  UPDATE email_outbox SET due_at = clock_timestamp() + interval '60 seconds', attempts = attempts + 1,
         lease_token = 'lease_pgb_' || CAST(:k AS text)
  WHERE order_id = 'ord_pgb_' || CAST(:k AS text)
  RETURNING order_id
)
SELECT o.order_id, o.email, o.first_name, p.iccid, p.smdp_address, p.activation_code,
       (SELECT count(*) FROM leased) AS leased
FROM claimed c JOIN orders o ON o.order_id = c.order_id JOIN purchases p ON p.order_id = o.order_id;
WITH succeeded AS (
  UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, last_response_status = 204,
         last_error = NULL, leased_until = NULL, lease_token = NULL
  WHERE delivery_id = 'dlv_pgb_' || CAST(:k AS text) AND lease_token = 'lease_pgb_' || CAST(:k AS text)
  RETURNING delivery_id
), sent AS (
  DELETE FROM email_outbox WHERE order_id = 'ord_pgb_' || CAST(:k AS text) RETURNING order_id
)
INSERT INTO email_deliveries (order_id, message_id, recipient)
SELECT order_id, '<' || order_id || '@esim.example>', 'ana@example.com' FROM sent
WHERE (SELECT count(*) FROM succeeded) = 1;
COMMIT;

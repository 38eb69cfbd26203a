-- The least SQL a purchase must run, as the service runs it (src/carts/carts.sql.ts lockCart,
-- src/orders/orders.sql.ts insertPendingOrderAhead and markCompleted, src/ledger/ledger.sql.ts
-- holdFunds and resolvePendingPurchase, which also draws the statement's posted_seq), in the same
-- two transactions, with the carrier call between them taking no time. One pgbench "transaction" is one whole purchase.
--
-- What the service records on top of this is not counted here: the carrier's own records, the eSIM,
-- purchase and bundle rows, the event and its webhook delivery, the confirmation email's outbox row
-- and delivery. purchase-full.sql runs all of them, as a reference beside this limit.
--
-- Each pgbench client is one partner (ptr_pgb_<client_id>, wallet acc_pgb_<client_id>) and buys
-- its own prepared carts in order (pgb_<client_id * 1000000 + n>): no two clients share a row.
-- Set with -D: n=0, price, revenue (the operator revenue account), external, data_mb and
-- validity_days (the package's terms, which the cart and the order carry).
\set n :n + 1
\set k :client_id * 1000000 + :n
BEGIN;
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
UPDATE ledger_accounts SET pending_debits_minor = pending_debits_minor + :price
WHERE partner_id = 'ptr_pgb_' || CAST(:client_id AS text) AND kind = 'partner_wallet'
  AND posted_credits_minor - posted_debits_minor - pending_debits_minor >= :price
RETURNING account_id, currency;
INSERT INTO ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
VALUES ('trf_pgb_' || CAST(:k AS text), 'acc_pgb_' || CAST(:client_id AS text), :revenue, :price, 'USD',
        'purchase', 'pending', 'ord_pgb_' || CAST(:k AS text));
COMMIT;
BEGIN;
UPDATE orders SET status = 'completed', iccid = '89' || lpad(CAST(:k AS text), 17, '0'), resolved_at = now(),
                  lease_until = NULL
WHERE order_id = 'ord_pgb_' || CAST(:k AS text) AND status = 'pending';
-- The wallet's settled balance after this posting (migration 0008); each client posts to its own wallet.
UPDATE ledger_transfers SET state = 'posted', resolved_at = clock_timestamp(), posted_seq = nextval('ledger_posted_seq'),
       wallet_balance_after_minor = (SELECT posted_credits_minor - posted_debits_minor - :price FROM ledger_accounts
                                     WHERE account_id = 'acc_pgb_' || CAST(:client_id AS text))
WHERE reference = 'ord_pgb_' || CAST(:k AS text) AND kind = 'purchase' AND state = 'pending'
RETURNING debit_account_id, amount_minor;
UPDATE ledger_accounts SET pending_debits_minor = pending_debits_minor - :price,
                           posted_debits_minor = posted_debits_minor + :price
WHERE account_id = 'acc_pgb_' || CAST(:client_id AS text);
COMMIT;

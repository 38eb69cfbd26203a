-- Partners, funded wallets and carts for pgbench/purchase.sql, purchase-full.sql and topup-full.sql,
-- written straight into the benchmark's database (they are not the service's partners, and no API key
-- reaches them). Each wallet pays for its carts in both purchase scripts, as many top-ups and the eSIM
-- topped up.
-- psql variables: clients, carts_per_client, price, funding (the operator funding account), and the
-- package's terms a cart carries: external, data_mb, validity_days.
INSERT INTO partners (partner_id, name)
SELECT 'ptr_pgb_' || c, 'pgbench client ' || c FROM generate_series(0, :clients - 1) AS c;
INSERT INTO ledger_accounts (account_id, kind, partner_id, currency, posted_credits_minor)
SELECT 'acc_pgb_' || c, 'partner_wallet', 'ptr_pgb_' || c, 'USD', :price * (:carts_per_client * 3 + 1)
FROM generate_series(0, :clients - 1) AS c;
-- The credit that funds each wallet, so the ledger still sums to zero.
INSERT INTO ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind,
                              state, reference, resolved_at, posted_seq, wallet_balance_after_minor)
SELECT 'trf_pgb_credit_' || c, :'funding', 'acc_pgb_' || c, :price * (:carts_per_client * 3 + 1), 'USD',
       'wallet_credit', 'posted', 'pgbench-seed', now(), nextval('ledger_posted_seq'),
       :price * (:carts_per_client * 3 + 1)
FROM generate_series(0, :clients - 1) AS c;
-- Each script its own carts: purchase.sql's from c * 1000000 + 1, purchase-full.sql's from + 500001.
INSERT INTO carts (cart_key, partner_id, package_id, external_package_id, data_mb, validity_days, start_date,
                   total_minor, currency, expires_at)
SELECT 'pgb_' || (c * 1000000 + base + n), 'ptr_pgb_' || c, 'fr-1gb-7d', :'external', :data_mb, :validity_days,
       NULL, :price, 'USD', now() + interval '2 hours'
FROM generate_series(0, :clients - 1) AS c, (VALUES (0), (500000)) AS s(base),
     generate_series(1, :carts_per_client) AS n;
-- One cart more per client, 900001: the eSIM topup-full.sql tops up, bought by one purchase-full.sql
-- transaction before it runs.
INSERT INTO carts (cart_key, partner_id, package_id, external_package_id, data_mb, validity_days, start_date,
                   total_minor, currency, expires_at)
SELECT 'pgb_' || (c * 1000000 + 900001), 'ptr_pgb_' || c, 'fr-1gb-7d', :'external', :data_mb, :validity_days,
       NULL, :price, 'USD', now() + interval '2 hours'
FROM generate_series(0, :clients - 1) AS c;
-- purchase-full.sql's and topup-full.sql's deliveries go to these: disabled, so the service's delivery
-- loop never calls them.
INSERT INTO webhook_endpoints (endpoint_id, partner_id, url, status, disabled_reason, secret_sealed)
SELECT 'whe_pgb_' || c, 'ptr_pgb_' || c, 'https://pgbench.invalid/webhooks', 'disabled', 'pgbench', 'pgbench'
FROM generate_series(0, :clients - 1) AS c;
ANALYZE carts;

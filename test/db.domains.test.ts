// Migration 0015: the single-column CHECKs of the tables a purchase writes became domains. The
// rules must be the same: every bad value is still refused by the database itself (23514), every
// value at the edge of a rule still passes, writes through the tables are refused, and the checks
// that compare columns are still table CHECKs.
import assert from "node:assert/strict";
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import type pg from "pg";
import { migrate } from "../src/db/migrate.ts";
import { createPool } from "../src/db/pool.ts";
import { createEmptyDatabase, createTestDatabase } from "./support/db.ts";

const { pool } = await createTestDatabase();

/** The domain's rule: values it must refuse, values at its edges it must take. */
const RULES: Record<string, { refused: unknown[]; taken: unknown[] }> = {
  minor_amount: { refused: [0, -1], taken: [1, "9007199254740991"] },
  minor_balance: { refused: [-1], taken: [0, 1] },
  currency_code: { refused: ["usd", "US", "USDD", ""], taken: ["USD", "EUR"] },
  account_kind: {
    refused: ["wallet", ""],
    taken: ["partner_wallet", "operator_funding", "operator_revenue"],
  },
  transfer_kind: { refused: ["credit"], taken: ["wallet_credit", "purchase", "refund", "adjustment"] },
  // Migration 0031: an adjustment's reason.
  adjustment_reason: { refused: ["", "r".repeat(501)], taken: ["r", "r".repeat(500)] },
  transfer_state: { refused: ["failed"], taken: ["pending", "posted", "voided"] },
  reference_text: { refused: ["", "r".repeat(129)], taken: ["r", "r".repeat(128)] },
  order_type: { refused: ["bundle"], taken: ["esim", "topup"] },
  order_status: {
    refused: ["cancelled", "Completed"],
    taken: ["pending", "completed", "failed", "refunded"],
  },
  esim_status: {
    refused: ["queued"],
    taken: ["released", "installed", "active", "depleted", "expired", "deleted", "cancelled"],
  },
  bundle_status: { refused: ["released"], taken: ["queued", "active", "depleted", "expired", "cancelled"] },
  // Migration 0047: a group order's line, and its traveller's email.
  line_position: { refused: [-1, 50], taken: [0, 49] },
  delivery_status: { refused: ["sent"], taken: ["pending", "succeeded", "failed"] },
  data_mb: { refused: [0, -1], taken: [1] },
  validity_days: { refused: [0, 3651], taken: [1, 3650] },
  attempt_count: { refused: [-1], taken: [0] },
  error_text: { refused: ["e".repeat(501)], taken: ["", "e".repeat(500)] },
  bundle_position: { refused: [-1], taken: [0, "9007199254740991"] },
  data_used_mb: { refused: [-1], taken: [0] },
  bundle_name: { refused: ["", "n".repeat(201)], taken: ["n", "n".repeat(200)] },
  event_type: { refused: ["order", "Order.completed", "order.completed.now"], taken: ["order.completed"] },
  dedup_key: { refused: ["", "k".repeat(201)], taken: ["k", "k".repeat(200)] },
  http_status: { refused: [99, 1000], taken: [100, 999] },
  process_id_text: { refused: ["p".repeat(101)], taken: ["", "p".repeat(100)] },
};

/** Which column of which table carries which domain (migration 0015). */
const COLUMNS: Record<string, Record<string, string>> = {
  ledger_accounts: {
    kind: "account_kind",
    currency: "currency_code",
    posted_credits_minor: "minor_balance",
    posted_debits_minor: "minor_balance",
    pending_debits_minor: "minor_balance",
    low_balance_threshold_minor: "minor_balance",
  },
  ledger_transfers: {
    amount_minor: "minor_amount",
    kind: "transfer_kind",
    state: "transfer_state",
    reference: "reference_text",
    reason: "adjustment_reason",
  },
  orders: {
    type: "order_type",
    status: "order_status",
    total_minor: "minor_amount",
    client_reference: "reference_text",
    data_mb: "data_mb",
    validity_days: "validity_days",
    carrier_refusal: "error_text",
    resolve_attempts: "attempt_count",
    lease_holder: "process_id_text",
    carrier_check: "carrier_check_word",
    carrier_check_attempts: "attempt_count",
    language: "language_tag",
  },
  esims: {
    status: "esim_status",
    sync_failures: "attempt_count",
    last_sync_error: "error_text",
    install_token: "install_token",
  },
  esim_bundles: {
    position: "bundle_position",
    name: "bundle_name",
    data_mb: "data_mb",
    validity_days: "validity_days",
    data_used_mb: "data_used_mb",
    status: "bundle_status",
  },
  events: { type: "event_type", dedup_key: "dedup_key" },
  webhook_deliveries: {
    status: "delivery_status",
    attempts: "attempt_count",
    last_response_status: "http_status",
    last_error: "error_text",
  },
  email_outbox: { attempts: "attempt_count", last_error: "error_text", position: "line_position" },
};

const MIGRATIONS = path.join(import.meta.dirname, "..", "src", "db", "migrations");

async function refusal(client: pg.PoolClient, text: string, values: unknown[]) {
  await client.query("savepoint probe");
  try {
    await client.query(text, values);
    await client.query("release savepoint probe");
    return null;
  } catch (error) {
    await client.query("rollback to savepoint probe");
    return error as { code: string; constraint?: string; message: string };
  }
}

test("every domain refuses what its column's CHECK refused and takes its edges", async () => {
  const client = await pool.connect();
  try {
    await client.query("begin");
    for (const [domain, rule] of Object.entries(RULES)) {
      for (const value of rule.refused) {
        const error = await refusal(client, `select $1::${domain}`, [value]);
        assert.equal(error?.code, "23514", `${domain} refuses ${JSON.stringify(value)}`);
        assert.match(error.message, new RegExp(`domain ${domain} violates check constraint`));
      }
      for (const value of [...rule.taken, null]) {
        assert.equal(
          await refusal(client, `select $1::${domain}`, [value]),
          null,
          `${domain} takes ${value}`,
        );
      }
    }
  } finally {
    await client.query("rollback");
    client.release();
  }
});

test("the columns carry the domains, and only the checks that compare columns stay on the tables", async () => {
  const columns = await pool.query<{ table_name: string; column_name: string; domain_name: string }>(
    `select table_name, column_name, domain_name from information_schema.columns
     where table_schema = 'public' and table_name = any($1::text[]) and domain_name is not null`,
    [Object.keys(COLUMNS)],
  );
  const found: Record<string, Record<string, string>> = {};
  for (const row of columns.rows) {
    found[row.table_name] = { ...found[row.table_name], [row.column_name]: row.domain_name };
  }
  assert.deepEqual(found, COLUMNS);
  // A table CHECK left on these tables must read two columns at least (one column: a domain), but
  // for the eSIM's ICCID: the primary key the bundles reference keeps its type (and its 475 bytes);
  // and the order's supplier (migration 0038) and quantity (0047): added NOT VALID with their constant
  // defaults, so no PostgreSQL 14-17 rewrites or reads the orders table for them, where a domain would.
  const checks = await pool.query<{ table_name: string; conname: string; columns: number }>(
    `select conrelid::regclass::text as table_name, conname, cardinality(conkey) as columns
     from pg_constraint where contype = 'c' and conrelid = any($1::regclass[])`,
    [Object.keys(COLUMNS)],
  );
  assert.deepEqual(
    checks.rows
      .filter((check) => check.columns < 2)
      .map((check) => `${check.table_name}.${check.conname}`)
      .sort(),
    ["esims.esims_iccid_check", "orders.orders_quantity_check", "orders.orders_supplier_check"],
  );
  const names = checks.rows.map((check) => `${check.table_name}.${check.conname}`).sort();
  for (const kept of [
    "ledger_accounts.wallet_available_not_negative",
    "ledger_accounts.wallet_has_partner",
    "ledger_accounts.threshold_only_on_wallets",
    "ledger_transfers.transfer_between_two_accounts",
    "ledger_transfers.transfer_resolved_iff_final",
    "ledger_transfers.transfer_posted_iff_seq",
    "ledger_transfers.refund_is_posted",
    "ledger_transfers.posted_has_wallet_balance",
    "ledger_transfers.adjustment_has_reason_and_is_posted",
    "orders.esim_order_has_cart",
    "orders.topup_order_has_iccid",
    "orders.completed_esim_has_iccid",
    "orders.resolved_iff_final",
    "orders.refunded_iff_refunded_at",
    "webhook_deliveries.webhook_deliveries_check",
  ]) {
    assert.ok(names.includes(kept), `${kept} is still a table CHECK`);
  }
});

test("writes through the tables are refused by the domains, and change nothing", async () => {
  await pool.query(`insert into partners (partner_id, name) values ('ptr_domains', 'Domains')`);
  await pool.query(
    `insert into ledger_accounts (account_id, kind, partner_id, currency)
     values ('acc_domains', 'partner_wallet', 'ptr_domains', 'USD'), ('acc_domains_rev', 'operator_revenue', null, 'USD')`,
  );
  const writes: [string, unknown[], string][] = [
    [
      `update ledger_accounts set pending_debits_minor = $1 where account_id = 'acc_domains'`,
      [-1],
      "minor_balance",
    ],
    [
      `update ledger_accounts set pending_debits_minor = pending_debits_minor - $1 where account_id = 'acc_domains'`,
      [1],
      "minor_balance",
    ],
    [`update ledger_accounts set currency = $1 where account_id = 'acc_domains'`, ["usd"], "currency_code"],
    [
      `insert into ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state, reference)
       values ('trf_domains', 'acc_domains', 'acc_domains_rev', $1::bigint - 1, 'USD', 'purchase', 'pending', 'ref')`,
      [1],
      "minor_amount",
    ],
    [
      `insert into events (event_id, partner_id, type, data) values ('evt_domains', 'ptr_domains', $1, '{}')`,
      ["Order.completed"],
      "event_type",
    ],
  ];
  for (const [text, values, domain] of writes) {
    await assert.rejects(pool.query(text, values), (error: { code: string; message: string }) => {
      assert.equal(error.code, "23514");
      assert.match(error.message, new RegExp(`domain ${domain} violates`));
      return true;
    });
  }
  const wallet = await pool.query(
    "select currency, pending_debits_minor from ledger_accounts where account_id = 'acc_domains'",
  );
  assert.deepEqual(wallet.rows, [{ currency: "USD", pending_debits_minor: 0 }]);
  const written = await pool.query(
    "select (select count(*) from ledger_transfers where transfer_id = 'trf_domains')::int as transfers, (select count(*) from events where event_id = 'evt_domains')::int as events",
  );
  assert.deepEqual(written.rows, [{ transfers: 0, events: 0 }]);
});

test("0015 on a database with rows: no table rewritten, every row kept, and no statement timeout", async () => {
  const { url } = await createEmptyDatabase("esim_upgrade");
  const upgraded = createPool(url, 2, "esim-upgrade");
  let directory: string | null = null;
  try {
    directory = await mkdtemp(path.join(tmpdir(), "esim-migrations-"));
    const files = (await readdir(MIGRATIONS)).filter((file) => file.endsWith(".sql")).sort();
    const before = files.filter((file) => file < "0015");
    for (const file of before) await copyFile(path.join(MIGRATIONS, file), path.join(directory, file));
    assert.deepEqual((await migrate(upgraded, directory)).applied, before);
    // Rows at the edges of the old CHECKs, as 0014 left them.
    await upgraded.query(`
      insert into partners (partner_id, name) values ('ptr_up', 'Upgrade');
      insert into ledger_accounts (account_id, kind, partner_id, currency, posted_credits_minor, low_balance_threshold_minor)
      values ('acc_up', 'partner_wallet', 'ptr_up', 'USD', 1, 0),
             ('acc_up_rev', 'operator_revenue', null, 'USD', 0, null);
      insert into ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind, state,
                                    reference)
      values ('trf_up', 'acc_up', 'acc_up_rev', 1, 'USD', 'purchase', 'pending', '${"r".repeat(128)}');
      insert into events (event_id, partner_id, type, data, dedup_key)
      values ('evt_up', 'ptr_up', 'wallet.balance_low', '{}', '${"k".repeat(200)}')`);
    // Statistics as a running database has them, for two of the tables.
    await upgraded.query("analyze ledger_accounts, events");
    const tables = Object.keys(COLUMNS);
    const files_of = async () =>
      (
        await upgraded.query<{ relname: string; relfilenode: number }>(
          "select relname, relfilenode from pg_class where relname = any($1::text[]) order by relname",
          [tables],
        )
      ).rows;
    const storage = await files_of();
    assert.equal(storage.length, tables.length);
    // 0015, then one that fails if a migration runs under the pool's statement_timeout.
    await copyFile(
      path.join(MIGRATIONS, files.find((file) => file.startsWith("0015_"))!),
      path.join(directory, "0015_domains.sql"),
    );
    await writeFile(
      path.join(directory, "9999_no_timeout.sql"),
      `do $$ begin
         if current_setting('statement_timeout') <> '0' or current_setting('lock_timeout') <> '30s' then
           raise exception 'statement_timeout is %, lock_timeout %', current_setting('statement_timeout'),
             current_setting('lock_timeout');
         end if;
       end $$;`,
    );
    assert.deepEqual((await migrate(upgraded, directory)).applied, [
      "0015_domains.sql",
      "9999_no_timeout.sql",
    ]);
    assert.deepEqual(await files_of(), storage, "no table rewritten");
    // The connections go back with the pool's timeouts (both of the pool's two).
    const clients = [await upgraded.connect(), await upgraded.connect()];
    for (const client of clients) {
      const settings = await client.query(
        "select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l",
      );
      assert.deepEqual(settings.rows, [{ s: "15s", l: "0" }]);
      client.release();
    }
    const rows = await upgraded.query(`
      select (select count(*) from ledger_accounts where account_id like 'acc_up%')::int as accounts,
             (select length(reference) from ledger_transfers where transfer_id = 'trf_up') as reference,
             (select length(dedup_key) from events where event_id = 'evt_up') as dedup_key,
             (select pg_typeof(pending_debits_minor)::text from ledger_accounts where account_id = 'acc_up') as type`);
    assert.deepEqual(rows.rows, [{ accounts: 2, reference: 128, dedup_key: 200, type: "minor_balance" }]);
    // The type change dropped the columns' statistics: the analysed tables have them again, the
    // never-analysed ones are still never analysed (size unknown to the planner, not empty).
    const statistics = await upgraded.query(`
      select (select count(*) from pg_stats where tablename = 'ledger_accounts' and attname = 'kind')::int as kind,
             (select count(*) from pg_stats where tablename = 'events' and attname = 'dedup_key')::int as dedup_key,
             (select reltuples from pg_class where relname = 'orders') as orders`);
    assert.deepEqual(statistics.rows, [{ kind: 1, dedup_key: 1, orders: -1 }]);
    await assert.rejects(
      upgraded.query(
        "update ledger_accounts set pending_debits_minor = pending_debits_minor - 1 where account_id = 'acc_up'",
      ),
      /domain minor_balance violates check constraint "minor_balance_not_negative"/,
      "a computed value is checked as a parameter is",
    );
  } finally {
    await upgraded.end().catch(() => undefined);
    if (directory !== null) await rm(directory, { recursive: true, force: true });
  }
});

test("0021 reads neither orders nor order_refunds: its process ids are a domain, its rule added NOT VALID", async () => {
  const { url } = await createEmptyDatabase("esim_upgrade_0021");
  const upgraded = createPool(url, 2, "esim-upgrade-0021");
  let directory: string | null = null;
  try {
    directory = await mkdtemp(path.join(tmpdir(), "esim-migrations-"));
    const files = (await readdir(MIGRATIONS)).filter((file) => file.endsWith(".sql")).sort();
    const before = files.filter((file) => file < "0021");
    for (const file of before) await copyFile(path.join(MIGRATIONS, file), path.join(directory, file));
    assert.deepEqual((await migrate(upgraded, directory)).applied, before);
    const body = await readFile(
      path.join(MIGRATIONS, files.find((file) => file.startsWith("0021_"))!),
      "utf8",
    );
    const client = await upgraded.connect();
    try {
      // The migration's body in a transaction of our own, which sees its own scans' counts before
      // any statistics are flushed (PostgreSQL 14 and later alike). A table CHECK added with a
      // column makes ALTER TABLE read the whole table under its ACCESS EXCLUSIVE lock: every
      // purchase waits for it on a database with many orders.
      // (PostgreSQL 15 and later count the backend's scans not flushed yet too: a difference, then.)
      const scans = async () =>
        (
          await client.query<{ orders: number; order_refunds: number }>(
            `select pg_stat_get_xact_numscans('orders'::regclass)::int as orders,
                    pg_stat_get_xact_numscans('order_refunds'::regclass)::int as order_refunds`,
          )
        ).rows[0]!;
      await client.query("begin");
      const before_0021 = await scans();
      await client.query(body);
      assert.deepEqual(await scans(), before_0021, "no table read by 0021");
      const error = await refusal(client, "select $1::process_id_text", ["p".repeat(101)]);
      assert.equal(error?.code, "23514", "a new value is checked all the same");
      await client.query("rollback");
    } finally {
      client.release();
    }
  } finally {
    await upgraded.end().catch(() => undefined);
    if (directory !== null) await rm(directory, { recursive: true, force: true });
  }
});

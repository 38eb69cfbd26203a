// The operator CLI, run as operators run it: a child process over this file's own database.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import pg from "pg";
import { type CliRun, runCli } from "./support/cli.ts";
import { createTestDatabase, type TestDatabase } from "./support/db.ts";

const database = await createTestDatabase();
const workDir = await mkdtemp(path.join(tmpdir(), "esim-cli-test-"));
after(() => rm(workDir, { recursive: true, force: true }));

function cli(args: string[], db: TestDatabase = database, env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { DATABASE_URL: db.url, APP_ENV: "sandbox", CURRENCY: "USD", ...env });
}

async function cliJson(args: string[], db: TestDatabase = database): Promise<any> {
  const run = await cli([...args, "--json"], db);
  assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

async function createPartner(
  name = "CLI Partner",
): Promise<{ partner_id: string; name: string; api_key: string; key_id: string }> {
  return cliJson(["partners", "create", name]);
}

async function walletCredits(partner_id: string): Promise<{ reference: string; amount_minor: number }[]> {
  const result = await database.pool.query(
    `select t.reference, t.amount_minor from ledger_transfers t
     join ledger_accounts a on a.account_id = t.credit_account_id
     where a.partner_id = $1 and t.kind = 'wallet_credit' order by t.created_at`,
    [partner_id],
  );
  return result.rows;
}

test("partners create prints a sandbox key whose SHA-256 is the stored key_hash, shown once", async () => {
  const run = await cli(["partners", "create", "Acme Travel"]);
  assert.equal(run.code, 0, run.stderr);
  const partner_id = run.stdout.match(/partner_id\s+(ptr_\S+)/)?.[1];
  const key_id = run.stdout.match(/key_id\s+(key_\S+)/)?.[1];
  const api_key = run.stdout.match(/api_key\s+(\S+)/)?.[1];
  assert.ok(partner_id && key_id && api_key, run.stdout);
  assert.match(api_key, /^sand_[A-Za-z0-9_-]{32,}$/);
  assert.match(run.stdout, /shown once — store it now/);

  const stored = await database.pool.query<{ partner_id: string; key_hash: Buffer; revoked_at: Date | null }>(
    "select partner_id, key_hash, revoked_at from api_keys where key_id = $1",
    [key_id],
  );
  assert.equal(stored.rows.length, 1);
  assert.equal(stored.rows[0]!.partner_id, partner_id);
  assert.equal(stored.rows[0]!.revoked_at, null);
  assert.deepEqual(stored.rows[0]!.key_hash, createHash("sha256").update(api_key).digest());
  const partner = await database.pool.query("select name from partners where partner_id = $1", [partner_id]);
  assert.equal(partner.rows[0]?.name, "Acme Travel");
});

test("partners create --json prints one document with partner_id, name, key_id and api_key", async () => {
  const created = await createPartner("Globex Roaming");
  assert.equal(created.name, "Globex Roaming");
  assert.match(created.partner_id, /^ptr_/);
  assert.match(created.key_id, /^key_/);
  const stored = await database.pool.query<{ key_hash: Buffer }>(
    "select key_hash from api_keys where key_id = $1 and partner_id = $2",
    [created.key_id, created.partner_id],
  );
  assert.deepEqual(stored.rows[0]?.key_hash, createHash("sha256").update(created.api_key).digest());
});

test("partners list and show include the partner, its keys and its balance", async () => {
  const created = await createPartner("Initech Travel");
  const list = await cliJson(["partners", "list", "--limit", "1000"]);
  assert.ok(list.data.some((p: any) => p.partner_id === created.partner_id && p.name === "Initech Travel"));
  const shown = await cliJson(["partners", "show", created.partner_id]);
  assert.equal(shown.name, "Initech Travel");
  assert.deepEqual(shown.balance, { amount_minor: 0, currency: "USD" });
  assert.deepEqual(
    shown.keys.map((k: any) => [k.key_id, k.key_hint, k.revoked_at]),
    [[created.key_id, created.api_key.slice(0, 9), null]],
  );
  const human = await cli(["partners", "show", created.partner_id]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /balance\s+0\.00 USD/);
  assert.ok(human.stdout.includes(created.key_id));
});

test("wallet credit twice with one reference credits once", async () => {
  const { partner_id } = await createPartner();
  const first = await cli(["wallet", "credit", partner_id, "1250", "--reference", "bank-transfer-1"]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /Credited 12\.50 USD/);
  const second = await cli(["wallet", "credit", partner_id, "1250", "--reference", "bank-transfer-1"]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /already credited/i);

  const balance = await cliJson(["wallet", "balance", partner_id]);
  assert.deepEqual(balance.balance, { amount_minor: 1250, currency: "USD" });
  assert.deepEqual(await walletCredits(partner_id), [{ reference: "bank-transfer-1", amount_minor: 1250 }]);

  const again = await cliJson(["wallet", "credit", partner_id, "1250", "--reference", "bank-transfer-1"]);
  assert.equal(again.credited, false);
  assert.deepEqual(again.balance, { amount_minor: 1250, currency: "USD" });
});

test("a malformed amount is refused with a clear message and credits nothing", async () => {
  const { partner_id } = await createPartner();
  for (const amount of ["12.5", "-3", "abc", "0", "1e3", "99999999999999"]) {
    const run = await cli(["wallet", "credit", partner_id, amount, "--reference", `bad-${amount}`]);
    assert.notEqual(run.code, 0, amount);
    assert.match(run.stderr, /whole number|negative/, amount);
    assert.equal(run.stdout, "", amount);
    const json = await cli([
      "wallet",
      "credit",
      partner_id,
      amount,
      "--reference",
      `bad-${amount}`,
      "--json",
    ]);
    assert.notEqual(json.code, 0, amount);
    assert.equal(json.stdout, "");
    const error = JSON.parse(json.stderr).error;
    assert.match(error.code, /^invalid_(amount|argument)$/, amount);
    assert.equal(typeof error.message, "string");
  }
  assert.deepEqual(await walletCredits(partner_id), []);
  const balance = await cliJson(["wallet", "balance", partner_id]);
  assert.equal(balance.balance.amount_minor, 0);
});

test("bad arguments are refused before any database is opened; bad settings exit 2", async () => {
  // Nothing listens on port 1: reaching the database would fail with a connection error instead.
  const unreachable = { DATABASE_URL: "postgres://postgres:postgres@127.0.0.1:1/none" };
  const amount = await cli(
    ["wallet", "credit", "ptr_AAAAAAAAAAAAAAAAAAAAAA", "12.5", "--reference", "r", "--json"],
    database,
    unreachable,
  );
  assert.equal(amount.code, 1);
  assert.equal(JSON.parse(amount.stderr).error.code, "invalid_amount");
  const id = await cli(["partners", "show", "acme", "--json"], database, unreachable);
  assert.equal(JSON.parse(id.stderr).error.code, "invalid_argument");
  const settings = await cli(["ledger", "audit", "--json"], database, { APP_ENV: "staging" });
  assert.equal(settings.code, 2);
  assert.equal(JSON.parse(settings.stderr).error.code, "configuration_error");
});

test("wallet credit without --reference, or for an unknown partner, credits nothing", async () => {
  const { partner_id } = await createPartner();
  const missing = await cli(["wallet", "credit", partner_id, "500"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /--reference/);
  const unknown = await cli([
    "wallet",
    "credit",
    "ptr_AAAAAAAAAAAAAAAAAAAAAA",
    "500",
    "--reference",
    "x",
    "--json",
  ]);
  assert.equal(unknown.code, 1);
  assert.equal(JSON.parse(unknown.stderr).error.code, "partner_not_found");
  assert.deepEqual(await walletCredits(partner_id), []);
});

test("wallet ledger lists the credit with its amount formatted in the currency", async () => {
  const { partner_id } = await createPartner();
  await cliJson(["wallet", "credit", partner_id, "100000", "--reference", "bt-100k"]);
  await cliJson(["wallet", "credit", partner_id, "5", "--reference", "bt-5c"]);
  const human = await cli(["wallet", "ledger", partner_id]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /wallet_credit\s+posted\s+credit\s+1000\.00 USD\s+bt-100k/);
  assert.match(human.stdout, /0\.05 USD\s+bt-5c/);
  const limited = await cliJson(["wallet", "ledger", partner_id, "--limit", "1"]);
  assert.equal(limited.data.length, 1);
  assert.equal(limited.data[0].reference, "bt-5c");
  assert.equal(limited.has_more, true);
});

test("keys issue adds a working key and keys revoke sets revoked_at and notifies the API processes", async () => {
  const { partner_id, key_id: first_key } = await createPartner();
  const issued = await cliJson(["keys", "issue", partner_id]);
  assert.match(issued.api_key, /^sand_/);
  const hash = createHash("sha256").update(issued.api_key).digest();
  const found = await database.pool.query("select key_id from api_keys where key_hash = $1", [hash]);
  assert.equal(found.rows[0]?.key_id, issued.key_id);

  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  const notified: string[] = [];
  listener.on("notification", (message) => notified.push(message.payload ?? ""));
  await listener.query("listen api_key_revoked");
  try {
    const run = await cli(["keys", "revoke", first_key]);
    assert.equal(run.code, 0, run.stderr);
    const deadline = Date.now() + 5_000;
    while (!notified.includes(first_key) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(notified, [first_key]);
  } finally {
    await listener.end();
  }
  const keys = await database.pool.query<{ key_id: string; revoked: boolean }>(
    "select key_id, revoked_at is not null as revoked from api_keys where partner_id = $1 order by created_at",
    [partner_id],
  );
  assert.deepEqual(keys.rows, [
    { key_id: first_key, revoked: true },
    { key_id: issued.key_id, revoked: false },
  ]);

  const unknown = await cli(["keys", "revoke", "key_AAAAAAAAAAAAAAAAAAAAAA", "--json"]);
  assert.equal(unknown.code, 1);
  assert.equal(JSON.parse(unknown.stderr).error.code, "api_key_not_found");
});

test("ledger audit passes on books the CLI wrote", async () => {
  const run = await cli(["ledger", "audit"]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /Ledger OK/);
  const audit = await cliJson(["ledger", "audit"]);
  assert.equal(audit.ok, true);
  assert.deepEqual(audit.breaches, []);
  assert.ok(audit.transfers >= 1);
});

test("ledger audit exits 1 listing the breach when a wallet's totals drift from its transfers", async () => {
  const other = await createTestDatabase();
  const created = await cliJson(["partners", "create", "Drifting"], other);
  await cliJson(["wallet", "credit", created.partner_id, "700", "--reference", "bt-1"], other);
  await other.pool.query(
    "update ledger_accounts set posted_credits_minor = posted_credits_minor + 1 where partner_id = $1",
    [created.partner_id],
  );
  const run = await cli(["ledger", "audit"], other);
  assert.equal(run.code, 1);
  assert.match(run.stdout, /FAILED/);
  assert.match(run.stdout, /posted_credits_minor is 701 but its transfers say 700/);
  const json = await cli(["ledger", "audit", "--json"], other);
  assert.equal(json.code, 1);
  assert.equal(JSON.parse(json.stdout).breaches.length, 1);
});

test("catalog import reports imported packages and a rejected row with its line number", async () => {
  await database.pool.query(
    "insert into destinations (destination_code, name) values ('FR', 'France'), ('DE', 'Germany') on conflict do nothing",
  );
  const file = path.join(workDir, "catalog.csv");
  await writeFile(
    file,
    [
      "package_id,external_package_id,name,destination_codes,data_mb,validity_days,wholesale_minor,retail_minor",
      "cli-fr-1gb,CLI-FR-1GB,France 1 GB,FR,1024,7,300,450",
      "cli-de-1gb,CLI-DE-1GB,Germany 1 GB,DE,1024,7,350,490",
      "cli-zz-1gb,CLI-ZZ-1GB,Nowhere 1 GB,ZZ,1024,7,350,490",
      "",
    ].join("\n"),
  );
  const report = await cliJson(["catalog", "import", file]);
  assert.equal(report.imported, 2);
  assert.equal(report.rejected_total, 1);
  assert.equal(report.rejected[0].line, 4);
  assert.match(report.rejected[0].reason, /ZZ/);
  const packages = await database.pool.query(
    "select package_id from packages where active order by package_id",
  );
  assert.deepEqual(
    packages.rows.map((row) => row.package_id),
    ["cli-de-1gb", "cli-fr-1gb"],
  );

  const human = await cli(["catalog", "import", file]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /unchanged\s+2/);
  assert.match(human.stdout, /^\s*4\s+3\s+unknown destination codes: ZZ$/m);
  assert.equal(human.stderr, "", "no progress bar when stderr is not a terminal");
});

test("catalog import of an unreadable or malformed file fails without touching the catalog", async () => {
  const missing = await cli(["catalog", "import", path.join(workDir, "absent.csv"), "--json"]);
  assert.equal(missing.code, 1);
  assert.equal(JSON.parse(missing.stderr).error.code, "file_not_readable");
  const bad = path.join(workDir, "bad.json");
  await writeFile(bad, '{"not": "an array"}');
  const malformed = await cli(["catalog", "import", bad, "--json"]);
  assert.equal(malformed.code, 1);
  assert.equal(JSON.parse(malformed.stderr).error.code, "invalid_catalog_file");
});

test("an unknown command exits 2 with the usage on stderr; help lists every command", async () => {
  const unknown = await cli(["partners", "delete", "ptr_x"]);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, "");
  assert.match(unknown.stderr, /unknown command: partners delete/);
  assert.match(unknown.stderr, /Usage: npm run cli --/);

  const wrongArity = await cli(["wallet", "balance"]);
  assert.equal(wrongArity.code, 2);
  assert.match(wrongArity.stderr, /wallet balance <partner_id>/);

  for (const args of [["help"], ["--help"], []]) {
    const help = await cli(args);
    assert.equal(help.code, 0, args.join(" "));
    for (const command of [
      "partners create",
      "partners list",
      "partners show",
      "keys issue",
      "keys revoke",
      "wallet credit",
      "wallet balance",
      "wallet ledger",
      "ledger audit",
      "catalog import",
    ]) {
      assert.ok(help.stdout.includes(`  ${command}`), `${command} in help`);
      assert.ok(help.stdout.includes(`e.g. npm run cli -- ${command}`), `${command} example`);
    }
  }
});

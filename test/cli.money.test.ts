// The operator CLI's money commands (issue 13): a partner's statement as CSV, its prices.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "csv-parse/sync";
import { type CliRun, runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase({ catalog: true });

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, { DATABASE_URL: database.url, APP_ENV: "sandbox", CURRENCY: "USD" });
}

async function cliJson(args: string[]): Promise<any> {
  const run = await cli([...args, "--json"]);
  assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

test("wallet statement prints the range's settled transactions as CSV, oldest first, chained", async () => {
  const partner = await cliJson(["partners", "create", "Statement CLI"]);
  await cliJson(["wallet", "credit", partner.partner_id, "1500", "--reference", "wire-1"]);
  await cliJson(["wallet", "credit", partner.partner_id, "250", "--reference", "wire,2"]);
  const today = new Date().toISOString().slice(0, 10);
  const run = await cli(["wallet", "statement", partner.partner_id, "--from", today, "--to", today, "--csv"]);
  assert.equal(run.code, 0, run.stderr);
  const rows: Record<string, string>[] = parse(run.stdout, { columns: true });
  assert.deepEqual(
    rows.map((r) => [r.type, r.amount_minor, r.balance_after_minor, r.reference, r.currency]),
    [
      ["credit", "1500", "1500", "wire-1", "USD"],
      ["credit", "250", "1750", "wire,2", "USD"],
    ],
  );
  const json = await cliJson(["wallet", "statement", partner.partner_id, "--from", today, "--to", today]);
  assert.deepEqual(
    json.data.map((t: any) => t.transaction_id),
    rows.map((r) => r.transaction_id),
  );
  const before = await cliJson([
    "wallet",
    "statement",
    partner.partner_id,
    "--from",
    "2020-01-01",
    "--to",
    "2020-01-31",
  ]);
  assert.deepEqual(before.data, []);
  const backwards = await cli([
    "wallet",
    "statement",
    partner.partner_id,
    "--from",
    today,
    "--to",
    "2020-01-01",
  ]);
  assert.equal(backwards.code, 1);
  assert.match(backwards.stderr, /after to/);
  const missing = await cli(["wallet", "statement", partner.partner_id, "--from", today]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /--to YYYY-MM-DD is required/);
});

test("partners pricing shows and sets a discount and overrides; an unknown package changes nothing", async () => {
  const partner = await cliJson(["partners", "create", "Pricing CLI"]);
  assert.deepEqual(await cliJson(["partners", "pricing", partner.partner_id]), {
    partner_id: partner.partner_id,
    discount_percent: 0,
    overrides: [],
  });
  const set = await cliJson([
    "partners",
    "pricing",
    partner.partner_id,
    "--discount",
    "12",
    "--override",
    "fr-1gb-7d=300",
    "--override",
    "fr-3gb-15d=700",
  ]);
  assert.deepEqual(set.overrides, [
    { package_id: "fr-1gb-7d", amount_minor: 300 },
    { package_id: "fr-3gb-15d", amount_minor: 700 },
  ]);
  assert.equal(set.discount_percent, 12);
  // Only the discount given: the overrides stay.
  const kept = await cliJson(["partners", "pricing", partner.partner_id, "--discount", "5"]);
  assert.deepEqual([kept.discount_percent, kept.overrides.length], [5, 2]);
  const unknown = await cli(["partners", "pricing", partner.partner_id, "--override", "nope=1"]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /nope/);
  for (const bad of [
    ["--discount", "91"],
    ["--override", "fr-1gb-7d=0"],
    ["--override", "fr-1gb-7d"],
  ]) {
    const run = await cli(["partners", "pricing", partner.partner_id, ...bad]);
    assert.equal(run.code, 1, bad.join(" "));
    assert.match(run.stderr, /--(discount|override) must be/);
  }
  assert.equal((await cliJson(["partners", "pricing", partner.partner_id])).discount_percent, 5);
});

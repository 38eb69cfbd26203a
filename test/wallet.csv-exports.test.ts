// CSV statement exports run at most CSV_EXPORTS_PER_PROCESS at once, CSV_EXPORTS_PER_PARTNER of one
// partner (wallet/export-transactions.ts, exportSlot): 40 at once, each reading up to 100,000 rows,
// slowed every other partner's reads tenfold. One over is refused at once, 429 rate_limited with
// Retry-After, holding no database connection. Real HTTP on a real port, over a pool of 6
// connections. The exports that run are held in their statement query by a lock on
// ledger_transfers (taken by the test), so which ones run at once is the database's state, not
// the machine's speed; a wallet balance reads ledger_accounts only, so another partner's read is
// not held by that lock, only by a pool that exports would have exhausted.

import assert from "node:assert/strict";
import net from "node:net";
import { after, test } from "node:test";
import { parse } from "csv-parse/sync";
import pg from "pg";
import { createPool } from "../src/db/pool.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { creditWallet } from "../src/wallet/credit-wallet.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { type Json, request } from "./support/http.ts";
import { addPerson, signInCookie } from "./support/people.ts";

const PER_PROCESS = 4;
const database = await createTestDatabase({ catalog: true });
const small = createPool(database.url, 6, "esim-export-pool");
after(() => small.end());
const app = await createTestApp(
  { csv_exports_per_process: PER_PROCESS, csv_exports_per_partner: 1 },
  { database: { url: database.url, pool: small } },
);
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

type Partner = { partner_id: string; api_key: string };

/** A partner with `credits` credits on its statement, each a different amount. */
async function partnerWithStatement(name: string, credits: number): Promise<Partner> {
  const partner = await app.createPartner(name, 0);
  for (let i = 0; i < credits; i++) {
    await creditWallet(
      app.db,
      {
        partner_id: partner.partner_id,
        amount_minor: 100 + i,
        reference: `${partner.partner_id}-${i}`,
      },
      CLI_ACTOR,
    );
  }
  return partner;
}

/** The statement's JSON rows (newest first) as the CSV's records would read: oldest first. */
async function expectedRows(partner: Partner): Promise<string[][]> {
  const page = await request(base, "GET", "/v1/profile/wallet/transactions?limit=100", {
    key: partner.api_key,
  });
  assert.equal(page.status, 200);
  return page.body.data.map((t: Json) => [t.transaction_id, String(t.amount.amount_minor)]).reverse();
}

function csvRows(text: string): string[][] {
  const records: Record<string, string>[] = parse(text, { columns: true });
  return records.map((r) => [r.transaction_id!, r.amount_minor!]);
}

function exportOf(partner: Partner): Promise<Response> {
  return fetch(`${base}/v1/profile/wallet/transactions`, {
    headers: { authorization: `Bearer ${partner.api_key}`, accept: "text/csv" },
  });
}

/** Holds ledger_transfers until the returned function is called: every statement query waits. */
async function lockStatements(): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query("begin");
  await client.query("lock table ledger_transfers in access exclusive mode");
  return async () => {
    await client.query("rollback");
    await client.end();
  };
}

/** Backends of the app waiting for the lock: the exports running now. */
async function exportsWaiting(): Promise<number> {
  const result = await database.pool.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where application_name = 'esim-export-pool' and wait_event_type = 'Lock'",
  );
  return result.rows[0]!.n;
}

/** Waits, a bounded number of times, until `done` holds; fails naming what never happened. */
async function until(done: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`never: ${what}`);
}

test("40 exports at once: 4 run, the other 36 are 429 at once; another partner's read is answered; the 4 are complete", async () => {
  const partners = await Promise.all(
    Array.from({ length: 10 }, (_, i) => partnerWithStatement(`Exporter ${i}`, 3 + i)),
  );
  const reader = await partnerWithStatement("Reader", 1);
  const expected = new Map<string, string[][]>();
  for (const partner of partners) expected.set(partner.api_key, await expectedRows(partner));

  const unlock = await lockStatements();
  let answered = 0;
  const exports = partners.flatMap((partner) =>
    Array.from({ length: 4 }, () =>
      exportOf(partner).then(async (response) => {
        answered += 1;
        return { partner, status: response.status, headers: response.headers, text: await response.text() };
      }),
    ),
  );
  try {
    await until(
      async () => answered + (await exportsWaiting()) >= exports.length,
      "every export answered or running",
    );
    assert.equal(await exportsWaiting(), PER_PROCESS, "as many running as the process allows");
    const read = await request(base, "GET", "/v1/profile/wallet", { key: reader.api_key });
    assert.equal(read.status, 200, JSON.stringify(read.body));
  } finally {
    await unlock();
  }
  const done = await Promise.all(exports);
  const ran = done.filter((d) => d.status === 200);
  const refused = done.filter((d) => d.status === 429);
  assert.equal(ran.length, PER_PROCESS);
  assert.equal(refused.length, exports.length - PER_PROCESS);
  assert.equal(
    new Set(ran.map((d) => d.partner.partner_id)).size,
    PER_PROCESS,
    "one of each partner at most",
  );
  for (const d of refused) {
    assert.equal(JSON.parse(d.text).code, "rate_limited");
    assert.ok(Number(d.headers.get("retry-after")) >= 1, "Retry-After");
  }
  for (const d of ran)
    assert.deepEqual(csvRows(d.text), expected.get(d.partner.api_key), "complete and correct");
  // Every slot was given back: each partner exports again.
  for (const partner of partners) assert.equal((await exportOf(partner)).status, 200);
});

test("a partner's second export waits for its first (the console's download too); another partner's runs", async () => {
  const first = await partnerWithStatement("One at a time", 2);
  const second = await partnerWithStatement("Someone else", 2);
  const owner = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: first.partner_id,
  });
  const cookie = `console_partner=${await signInCookie(base, owner)}`;
  const unlock = await lockStatements();
  let running: Promise<Response>[] = [];
  try {
    running = [exportOf(first)];
    await until(async () => (await exportsWaiting()) === 1, "the first export running");
    const again = await exportOf(first);
    assert.equal(again.status, 429);
    assert.equal(((await again.json()) as Json).code, "rate_limited");
    const download = await fetch(`${base}/console/wallet/statement.csv`, { headers: { cookie } });
    assert.equal(download.status, 429, "the console's download counts against the same bound");
    assert.ok(Number(download.headers.get("retry-after")) >= 1);
    running.push(exportOf(second));
    await until(async () => (await exportsWaiting()) === 2, "another partner's export running beside it");
  } finally {
    await unlock();
  }
  const [mine, theirs] = await Promise.all(running);
  assert.deepEqual(csvRows(await mine!.text()), await expectedRows(first));
  assert.deepEqual(csvRows(await theirs!.text()), await expectedRows(second));
  const download = await fetch(`${base}/console/wallet/statement.csv`, { headers: { cookie } });
  assert.equal(download.status, 200, "its slot was given back");
  assert.deepEqual(csvRows(await download.text()), await expectedRows(first));
});

test("the operator's PDF download of a partner's statement never takes the partner's own export slot", async () => {
  const partner = await partnerWithStatement("Watched by the operator", 2);
  const month = new Date().toISOString().slice(0, 7);
  const operatorPdf = () =>
    fetch(`${base}/admin/partners/${partner.partner_id}/wallet/statements/${month}`, {
      headers: { authorization: `Bearer ${app.ctx.config.admin_token}`, accept: "application/pdf" },
    });
  const unlock = await lockStatements();
  let running: Promise<Response>[] = [];
  try {
    running = [operatorPdf()];
    await until(async () => (await exportsWaiting()) === 1, "the operator's download running");
    const operatorAgain = await operatorPdf();
    assert.equal(operatorAgain.status, 429, "the operator's downloads have their bound too");
    running.push(exportOf(partner));
    await until(async () => (await exportsWaiting()) === 2, "the partner's own export running beside it");
  } finally {
    await unlock();
  }
  const [pdf, csv] = await Promise.all(running);
  assert.equal(pdf!.status, 200);
  assert.equal(pdf!.headers.get("content-type"), "application/pdf");
  assert.ok((await pdf!.arrayBuffer()).byteLength > 0);
  assert.equal(csv!.status, 200, "the partner's export was not refused");
  assert.deepEqual(csvRows(await csv!.text()), await expectedRows(partner));
});

/** Locks api_keys until the returned function is called: a key never seen here waits in its lookup. */
async function lockApiKeys(): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query("begin");
  await client.query("lock table api_keys in access exclusive mode");
  return async () => {
    await client.query("rollback");
    await client.end();
  };
}

test("an export whose client went away before its handler ran gives its slot back", async () => {
  const partner = await partnerWithStatement("Gone before the handler", 2);
  const unlock = await lockApiKeys();
  try {
    // The request's key lookup waits on the lock; the client hangs up meanwhile.
    const socket = net.connect(Number(new URL(base).port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      "GET /v1/profile/wallet/transactions HTTP/1.1\r\nhost: localhost\r\n" +
        `authorization: Bearer ${partner.api_key}\r\naccept: text/csv\r\n\r\n`,
    );
    await until(async () => (await exportsWaiting()) === 1, "the key lookup waiting");
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    await unlock();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  const again = await exportOf(partner);
  assert.equal(again.status, 200, "the partner's one slot is free again");
  assert.deepEqual(csvRows(await again.text()), await expectedRows(partner));
});

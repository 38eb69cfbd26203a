// Crash safety of a group order (issue 34): real service processes, the carrier simulator as a
// process of its own. A process SIGKILLed in the middle of a group's provisioning (two lines'
// answers recorded, the others in flight at the carrier or not yet asked), then the cart's retry on
// another process, or the resolver alone, finishes it: one order, each line's reference provisioned
// once at the carrier (none for a refused line, nothing else under the order's id), the wallet
// charged the completed lines' price once, a clean ledger, one confirmation email row per
// traveller whose eSIM was made. And a line the carrier does not answer for: the slow one outlives
// the request (503, the order pending, completed by the resolver with the others); the unavailable
// one keeps the order pending, every retry 503 or 409, its price held and never charged.
//
// The services send mail to a port where nothing listens: the confirmation rows stay in the outbox,
// where the test reads what the completion wrote (one row per traveller, by position). Sending them
// is the mailer's (test/notifications.*).
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { type Answer, call, createWorld, END_USER, newPartner, waitFor } from "./support/world.ts";

/** A loopback port nobody listens on: bound, read and closed. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const NO_MAIL = { SMTP_URL: `smtp://127.0.0.1:${await deadPort()}` };
const world = await createWorld({ services: 0, env: NO_MAIL });
const db = createKysely<Database>(world.database.pool);
const CREDIT_MINOR = 1_000_000;

type Traveller = { first_name: string; last_name: string; email: string };

function travellers(emails: string[]): Traveller[] {
  return emails.map((email, i) => ({ first_name: `T${i}`, last_name: "Group", email }));
}

function plain(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `traveller${i}@example.com`);
}

async function groupCart(
  url: string,
  key: string,
  quantity: number,
): Promise<{ cart_key: string; price: number }> {
  const cart = await call(url, "POST", "/v1/orders/cart", {
    key,
    body: { package_id: "fr-1gb-7d", quantity },
  });
  assert.equal(cart.status, 201, JSON.stringify(cart.body));
  return { cart_key: cart.body.cart_key, price: cart.body.total.amount_minor / quantity };
}

function submitGroup(url: string, key: string, cart_key: string, people: Traveller[]): Promise<Answer> {
  return call(url, "POST", "/v1/orders/submit", { key, body: { cart_key, ...END_USER, travellers: people } });
}

async function orderOf(cart_key: string) {
  const rows = await sql<{ order_id: string; status: string; total_minor: number }>`
    select order_id, status, total_minor from orders where cart_key = ${cart_key}`.execute(db);
  assert.equal(rows.rows.length, 1, "one order for the cart");
  return rows.rows[0]!;
}

async function linesOf(order_id: string) {
  const rows = await sql<{ position: number; reference: string; status: string; iccid: string | null }>`
    select position, reference, status, iccid from order_lines where order_id = ${order_id} order by position`.execute(
    db,
  );
  return rows.rows;
}

/**
 * The group's whole record once final: one order; each completed line's reference provisioned once
 * at the carrier with the line's ICCID, a refused line's never, nothing else under the order's id;
 * one posted transfer for the completed lines' price and the wallet down by it; one eSIM and one
 * purchase per completed line; one email row per completed line's traveller; a clean ledger.
 */
async function exactlyOnce(
  cart_key: string,
  partner_key: string,
  url: string,
  price: number,
  declined: number[],
): Promise<void> {
  const order = await orderOf(cart_key);
  assert.equal(order.status, "completed");
  const lines = await linesOf(order.order_id);
  const made = lines.filter((line) => line.status === "completed");
  assert.deepEqual(
    lines.filter((line) => line.status !== "completed").map((line) => [line.position, line.status]),
    declined.map((position) => [position, "failed"]),
    "the declined lines failed, every other line was made",
  );
  const carrier = await world.simulator.audit();
  const ours = carrier.provisionings.filter((p) => p.reference.startsWith(order.order_id));
  assert.deepEqual(
    ours.map((p) => [p.reference, p.iccid]).sort(),
    made.map((line) => [line.reference, line.iccid]).sort(),
    "one profile per completed line's reference, none for a refused line, nothing else",
  );
  const refused = carrier.refusals.filter((r) => r.reference.startsWith(order.order_id));
  assert.deepEqual(
    refused.map((r) => r.reference).sort(),
    declined.map((position) => `${order.order_id}-${position}`).sort(),
  );
  assert.equal(order.total_minor, made.length * price, "the total is the completed lines' price");
  const transfers = await sql<{ state: string; amount_minor: number }>`
    select state, amount_minor from ledger_transfers where reference = ${order.order_id}`.execute(db);
  assert.deepEqual(transfers.rows, [{ state: "posted", amount_minor: made.length * price }]);
  const wallet = await call(url, "GET", "/v1/profile/wallet", { key: partner_key });
  assert.equal(wallet.body.balance.amount_minor, CREDIT_MINOR - made.length * price, "charged once");
  assert.equal(wallet.body.pending.amount_minor, 0, "nothing left held");
  const counts = await sql<{ esims: number; purchases: number }>`
    select (select count(*) from esims where order_id = ${order.order_id})::int as esims,
           (select count(*) from purchases where order_id = ${order.order_id})::int as purchases`.execute(db);
  assert.deepEqual(counts.rows[0], { esims: made.length, purchases: made.length });
  const emails = await sql<{ position: number }>`
    select position from email_outbox where order_id = ${order.order_id}
    union all select position from email_deliveries where order_id = ${order.order_id}
    order by position`.execute(db);
  assert.deepEqual(
    emails.rows.map((row) => row.position),
    made.map((line) => line.position),
    "one email per traveller whose eSIM was made",
  );
  assert.deepEqual((await auditLedger(db)).breaches, []);
  // The whole audit, groups line by line; the emails are still queued here (no mail server), as read above.
  const audit = await auditSystem({ pool: world.database.pool, simulator: world.simulator });
  const breaches = audit.breaches.filter((breach) => !breach.startsWith("[group-emails]"));
  assert.deepEqual(breaches, [], formatAudit(audit));
}

/** SIGKILLs a process at the group's second recorded line; returns the cart and what was recorded. */
async function killedMidGroup(people: Traveller[]) {
  const doomed = await world.startService({ CRASH_AT: "after_second_group_line" });
  const partner = await newPartner(doomed.url, CREDIT_MINOR);
  const cart = await groupCart(doomed.url, partner.api_key, people.length);
  await assert.rejects(
    submitGroup(doomed.url, partner.api_key, cart.cart_key, people),
    "the request dies with its process",
  );
  await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
  const order = await orderOf(cart.cart_key);
  assert.equal(order.status, "pending");
  const lines = await linesOf(order.order_id);
  const final = lines.filter((line) => line.status !== "pending").length;
  assert.ok(
    final >= 2 && final < people.length,
    `killed mid-group: ${final} of ${people.length} lines final`,
  );
  return { partner, cart, order_id: order.order_id };
}

test("killed after a group's second line, retried on another process: one order, each line made once, charged for the lines made", async () => {
  const people = travellers(plain(8));
  people[6]!.email = "decline@carrier.test";
  const { partner, cart } = await killedMidGroup(people);
  // The resolver's first look comes late: the retries alone must take the dead process's order over.
  const survivor = await world.startService({ RESOLVE_AFTER_MS: "600000" });
  try {
    const done = await waitFor("the retry to drive the abandoned group", async () => {
      const retry = await submitGroup(survivor.url, partner.api_key, cart.cart_key, people);
      assert.ok([200, 409].includes(retry.status), `${retry.status} ${JSON.stringify(retry.body)}`);
      return retry.status === 200 ? retry : null;
    });
    assert.equal(done.body.status, "completed");
    assert.deepEqual(
      done.body.purchases.map((p: { status: string }) => p.status),
      people.map((_, i) => (i === 6 ? "failed" : "completed")),
    );
    await exactlyOnce(cart.cart_key, partner.api_key, survivor.url, cart.price, [6]);
    const again = await submitGroup(survivor.url, partner.api_key, cart.cart_key, people);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.body.orderID, done.body.orderID);
  } finally {
    await survivor.stop();
  }
});

test("killed after a group's second line, nobody retries: the resolver finishes it exactly once", async () => {
  const { partner, cart } = await killedMidGroup(travellers(plain(7)));
  const restarted = await world.startService();
  try {
    await waitFor("the resolver", async () => (await orderOf(cart.cart_key)).status === "completed", 30_000);
    await exactlyOnce(cart.cart_key, partner.api_key, restarted.url, cart.price, []);
  } finally {
    await restarted.stop();
  }
});

test("a slow traveller outlives the request: 503, the order pending, then completed by the resolver with the others", async () => {
  const service = await world.startService();
  try {
    const partner = await newPartner(service.url, CREDIT_MINOR);
    const cart = await groupCart(service.url, partner.api_key, 3);
    const people = travellers(["a@example.com", "slow@carrier.test", "c@example.com"]);
    const first = await submitGroup(service.url, partner.api_key, cart.cart_key, people);
    assert.equal(first.status, 503, JSON.stringify(first.body));
    assert.equal(first.body.code, "carrier_unavailable");
    const order = await orderOf(cart.cart_key);
    assert.equal(order.status, "pending");
    const wallet = await call(service.url, "GET", "/v1/profile/wallet", { key: partner.api_key });
    assert.equal(
      wallet.body.pending.amount_minor,
      3 * cart.price,
      "held, not spent, while a line is unknown",
    );
    await waitFor("the resolver", async () => (await orderOf(cart.cart_key)).status === "completed", 30_000);
    await exactlyOnce(cart.cart_key, partner.api_key, service.url, cart.price, []);
    const retry = await submitGroup(service.url, partner.api_key, cart.cart_key, people);
    assert.equal(retry.status, 200);
    assert.equal(retry.body.purchases.length, 3);
  } finally {
    await service.stop();
  }
});

test("an unavailable traveller keeps the group pending: retries 503 or 409, the line never charged nor made", async () => {
  const service = await world.startService();
  try {
    const partner = await newPartner(service.url, CREDIT_MINOR);
    const cart = await groupCart(service.url, partner.api_key, 2);
    const people = travellers(["a@example.com", "unavailable@carrier.test"]);
    const first = await submitGroup(service.url, partner.api_key, cart.cart_key, people);
    assert.equal(first.status, 503, JSON.stringify(first.body));
    const { order_id } = await orderOf(cart.cart_key);
    for (let i = 0; i < 3; i++) {
      const retry = await submitGroup(service.url, partner.api_key, cart.cart_key, people);
      assert.ok([409, 503].includes(retry.status), `${retry.status} ${JSON.stringify(retry.body)}`);
    }
    // The resolver keeps asking (each look counted on the order), and gets no answer either.
    await waitFor("two looks of the resolver", async () => {
      const looks = await sql<{ resolve_attempts: number }>`
        select resolve_attempts from orders where order_id = ${order_id}`.execute(db);
      return (looks.rows[0]?.resolve_attempts ?? 0) >= 2;
    });
    const order = await orderOf(cart.cart_key);
    assert.equal(order.status, "pending");
    assert.deepEqual(
      (await linesOf(order_id)).map((line) => line.status),
      ["completed", "pending"],
    );
    const carrier = await world.simulator.audit();
    assert.deepEqual(
      carrier.provisionings.filter((p) => p.reference.startsWith(order_id)).map((p) => p.reference),
      [`${order_id}-0`],
      "the unavailable line made nothing",
    );
    const transfers = await sql<{ state: string; amount_minor: number }>`
      select state, amount_minor from ledger_transfers where reference = ${order_id}`.execute(db);
    assert.deepEqual(
      transfers.rows,
      [{ state: "pending", amount_minor: 2 * cart.price }],
      "held, never posted",
    );
    const wallet = await call(service.url, "GET", "/v1/profile/wallet", { key: partner.api_key });
    assert.equal(wallet.body.balance.amount_minor, CREDIT_MINOR - 2 * cart.price);
    const spent = await sql<{ posted_debits_minor: number }>`
      select posted_debits_minor from ledger_accounts where partner_id = ${partner.partner_id}`.execute(db);
    assert.equal(Number(spent.rows[0]!.posted_debits_minor), 0, "nothing charged");
    assert.deepEqual((await auditLedger(db)).breaches, []);
  } finally {
    await service.stop();
  }
});

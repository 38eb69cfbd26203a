// Every writer of one partner's wallet at once, group orders among them (issue 34): two service
// processes on one database, and at the same moment the same group cart submitted on both (one
// order), other group submits, single purchases, top-ups of a group's eSIMs, refunds of single
// orders (each asked on both processes), the refund of a group (409 refund_not_allowed, reason
// group_order) and carrier signals on the group's eSIMs. Whatever PostgreSQL schedules, nobody sees
// a 500, every order ends final once, and the whole audit (groups line by line) passes afterwards.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { topUpBody } from "./support/fixtures.ts";
import type { EsimSignal } from "./support/simulator.ts";
import { type Answer, call, createWorld, END_USER, type Json, newPartner, waitFor } from "./support/world.ts";

const CALLBACK_TOKEN = "callback-token-0123456789abcdef";
// The test sends the carrier's signals itself; a carrier call may take its time on a busy machine.
const world = await createWorld({
  services: 2,
  env: { CARRIER_CALLBACK_TOKEN: CALLBACK_TOKEN, CARRIER_TIMEOUT_MS: "10000", RESOLVE_AFTER_MS: "15000" },
});
const [one, two] = world.services.map((service) => service.url) as [string, string];
const db = createKysely<Database>(world.database.pool);
const carrier = new HttpCarrier({
  base_url: world.simulator.url,
  api_key: world.simulator.apiKey,
  timeout_ms: 5_000,
});
const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };

type Seen = { what: string; status: number; code: unknown };
const seen: Seen[] = [];

function note(what: string) {
  return (answer: Answer): Answer => {
    seen.push({ what, status: answer.status, code: answer.body?.code });
    return answer;
  };
}

async function cart(url: string, key: string, quantity: number): Promise<string> {
  const made = await call(url, "POST", "/v1/orders/cart", {
    key,
    body: { package_id: "fr-1gb-7d", quantity },
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body.cart_key;
}

function travellers(tag: string, quantity: number): Json[] {
  return Array.from({ length: quantity }, (_, i) => ({
    first_name: `T${i}`,
    last_name: tag,
    email: `${tag}-${i}@example.com`,
  }));
}

function submitGroup(url: string, key: string, cart_key: string, people: Json[]): Promise<Answer> {
  return call(url, "POST", "/v1/orders/submit", { key, body: { cart_key, ...END_USER, travellers: people } });
}

/** A submit retried the way a partner retries (same cart) until it is final: the answer that ended it. */
async function submitUntilFinal(
  url: string,
  key: string,
  cart_key: string,
  people: Json[] | null,
): Promise<Answer> {
  return waitFor("a final answer", async () => {
    const body = { cart_key, ...END_USER, ...(people ? { travellers: people } : {}) };
    const answer = note("submit")(await call(url, "POST", "/v1/orders/submit", { key, body }));
    return answer.status === 409 || answer.status === 503 ? null : answer;
  });
}

/** Signals for each eSIM, as the carrier pushes them, each fresher than the last. */
async function signals(iccids: string[]): Promise<void> {
  for (const iccid of iccids) {
    const state = await carrier.esimState(iccid);
    assert.equal(state.kind, "ok", JSON.stringify(state));
    const base = (state as { value: EsimSignal }).value;
    for (let i = 1; i <= 4; i++) {
      const as_of = new Date(Date.parse(base.as_of) + i * 1_000).toISOString();
      const url = i % 2 === 0 ? one : two;
      note("signal")(
        await call(url, "POST", "/carrier/callbacks", {
          body: { ...base, as_of },
          headers: { authorization: `Bearer ${CALLBACK_TOKEN}` },
        }),
      );
    }
  }
}

/** One storm on a new partner's wallet; its refunds driven to their end. */
async function round(): Promise<void> {
  const from = seen.length;
  const partner = await newPartner(one, 10_000_000);
  const key = partner.api_key;
  // Before the storm: a group whose eSIMs are topped up and signalled, and singles to refund.
  const first = await submitGroup(one, key, await cart(one, key, 3), travellers("first", 3));
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const groupIccids = first.body.purchases.map((p: { iccid: string }) => p.iccid) as string[];
  const singles: string[] = [];
  for (let i = 0; i < 3; i++) {
    const bought = await call(one, "POST", "/v1/orders/submit", {
      key,
      body: { cart_key: await cart(one, key, 1), ...END_USER },
    });
    assert.equal(bought.status, 200, JSON.stringify(bought.body));
    singles.push(bought.body.orderID);
  }
  const shared = await cart(one, key, 4);
  const sharedPeople = travellers("shared", 4);
  const others = await Promise.all([2, 3, 5].map((quantity) => cart(two, key, quantity)));
  const purchases = await Promise.all([0, 1, 2, 3].map(() => cart(one, key, 1)));

  const writers: Promise<unknown>[] = [];
  // The same group cart on both processes, twice each: one order.
  for (const url of [one, two, one, two]) writers.push(submitUntilFinal(url, key, shared, sharedPeople));
  for (const [i, cart_key] of others.entries()) {
    const people = travellers(`other${i}`, [2, 3, 5][i]!);
    writers.push(submitUntilFinal(i % 2 ? one : two, key, cart_key, people));
  }
  for (const [i, cart_key] of purchases.entries())
    writers.push(submitUntilFinal(i % 2 ? two : one, key, cart_key, null));
  for (const [i, iccid] of groupIccids.entries()) {
    const body = topUpBody(iccid, TOPUP);
    const headers = { "idempotency-key": `group-topup-${i}` };
    writers.push(
      call(i % 2 ? one : two, "POST", "/v1/orders/submit-topup", { key, body, headers }).then(note("topup")),
    );
  }
  for (const order_id of singles)
    for (const url of [one, two])
      writers.push(call(url, "POST", `/v1/orders/${order_id}/refund`, { key }).then(note("refund")));
  writers.push(
    call(two, "POST", `/v1/orders/${first.body.orderID}/refund`, { key }).then(note("group refund")),
  );
  writers.push(signals(groupIccids));
  const answers = (await Promise.all(writers)) as (Answer | undefined)[];

  const sharedAnswers = answers.slice(0, 4) as Answer[];
  assert.deepEqual(
    sharedAnswers.map((a) => a.status),
    [200, 200, 200, 200],
    JSON.stringify(sharedAnswers.map((a) => a.body)),
  );
  assert.equal(new Set(sharedAnswers.map((a) => a.body.orderID)).size, 1, "one order for the cart");
  const orders = await sql<{
    n: number;
  }>`select count(*)::int as n from orders where cart_key = ${shared}`.execute(db);
  assert.equal(orders.rows[0]!.n, 1);
  for (const answer of answers.slice(4, 11) as Answer[])
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const topups = seen.slice(from).filter((s) => s.what === "topup");
  assert.deepEqual(
    topups.map((s) => s.status),
    groupIccids.map(() => 200),
    `a top-up of a group's eSIM works: ${JSON.stringify(topups)}`,
  );
  const groupRefund = seen.slice(from).find((s) => s.what === "group refund");
  assert.deepEqual(groupRefund, { what: "group refund", status: 409, code: "refund_not_allowed" });
  const refused = await call(one, "POST", `/v1/orders/${first.body.orderID}/refund`, { key });
  assert.equal(refused.body.reason, "group_order", JSON.stringify(refused.body));

  // The singles' refunds end (retried as a partner would), each refunded once.
  for (const order_id of singles) {
    const ended = await waitFor("the refund's end", async () => {
      const answer = note("refund retry")(await call(one, "POST", `/v1/orders/${order_id}/refund`, { key }));
      return answer.status === 409 && answer.body.code === "request_in_progress" ? null : answer;
    });
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
  }
}

const ROUNDS = 3;

test(`group submits (one cart on both processes), purchases, top-ups of a group's eSIMs, refunds and signals at once: never a 500, one order per cart, the audit clean (${ROUNDS} rounds)`, async () => {
  for (let i = 0; i < ROUNDS; i++) await round();
  const ours = seen.filter((s) => s.status >= 500);
  assert.deepEqual(ours, [], "no 5xx: the carrier answers every call here");
  const audit = await waitFor("every order final", async () => {
    const result = await auditSystem({ pool: world.database.pool, simulator: world.simulator });
    return result.figures.pending === 0 ? result : null;
  });
  // Emails are sent by a job of their own, not waited for here (test/notifications.*).
  const breaches = audit.breaches.filter(
    (breach) => !breach.startsWith("[one-email-per-new-esim]") && !breach.startsWith("[group-emails]"),
  );
  assert.deepEqual(breaches, [], formatAudit(audit));
  assert.equal(audit.figures.group_orders, 5 * ROUNDS, formatAudit(audit));
  assert.equal(audit.figures.refunded, 3 * ROUNDS, formatAudit(audit));
});

// Crash safety of the confirmation email sweep: a worker process (ROLE=worker) is SIGKILLed in the
// middle of a claimed batch, with sends in flight at a real SMTP relay and claimed emails queued
// behind them. Every order's email is still delivered, its delivery recorded exactly once, and the
// only repeats are sends that were in flight at the kill (the relay took them, the process died
// before recording them), resent with the same Message-ID.
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnNode, waitForOutput } from "./support/processes.ts";
import { startSmtpServer } from "./support/smtp.ts";
import { createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const ORDERS = 40;
const CONCURRENCY = 4;

const world = await createWorld({ services: 0 });
const { pool } = world.database;

/** A worker process of the service against the world's database, sending to `smtp_url`. */
async function startWorkerProcess(smtp_url: string, extra: Record<string, string> = {}) {
  const running = spawnNode({
    name: "worker",
    script: "src/main.ts",
    env: { ...world.env, SMTP_URL: smtp_url, ROLE: "worker", LOG_LEVEL: "info", ...extra },
  });
  await waitForOutput(running, /(eSIM ordering worker running)/, 30_000);
  return running;
}

/** `ORDERS` completed eSIM orders, bought through an API process that sends no email (ROLE=api). */
async function buyOrders(): Promise<string[]> {
  const api = await world.startService({ ROLE: "api" });
  const partner = await newPartner(api.url, 1_000_00);
  const order_ids: string[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const cart = await newCart(api.url, partner.api_key);
    const answer = await submit(api.url, partner.api_key, cart.cart_key);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    order_ids.push(answer.body.orderID);
  }
  await api.stop();
  return order_ids;
}

function messageIdsOf(raw: string): string[] {
  return [...raw.matchAll(/^Message-ID: <confirmation\.(ord_[A-Za-z0-9_-]+)@/gim)].map((match) => match[1]!);
}

test("a worker killed mid-batch: every email delivered, each delivery recorded once, only in-flight sends repeated", async () => {
  const order_ids = await buyOrders();
  const queued = await pool.query("select 1 from email_outbox where order_id = any($1::text[])", [order_ids]);
  assert.equal(queued.rowCount, ORDERS, "every completed order left its email in the outbox");

  // A relay answering each message after 150 ms, so the kill finds sends in flight. A 70 s lease
  // holds two rounds of sends: a claimed batch of 8, four sending and four queued behind them.
  const smtp = await startSmtpServer({ answer_after_ms: 150 });
  const doomed = await startWorkerProcess(smtp.url, {
    EMAIL_CONCURRENCY: String(CONCURRENCY),
    STALE_JOB_AFTER_MS: "70000",
  });
  await smtp.waitFor(10, 30_000);
  await doomed.kill();
  const killed_with = smtp.messages.length;

  const claimed = await pool.query<{ order_id: string }>(
    `select order_id from email_outbox
     where order_id = any($1::text[]) and due_at > now() + interval '30 seconds'`,
    [order_ids],
  );
  assert.ok(claimed.rowCount! > 0, "the kill left claimed emails unsent, under the dead process's lease");
  assert.ok(claimed.rowCount! <= 2 * CONCURRENCY, `${claimed.rowCount} claimed: at most one batch`);
  // Their lease runs out (70 s, shortened here): due again, for whoever sweeps next.
  await pool.query("update email_outbox set due_at = now() where order_id = any($1::text[])", [
    claimed.rows.map((row) => row.order_id),
  ]);

  const restarted = await startWorkerProcess(smtp.url);
  try {
    await waitFor(
      "the outbox to drain",
      async () =>
        (await pool.query("select 1 from email_outbox where order_id = any($1::text[])", [order_ids]))
          .rowCount === 0,
      30_000,
    );
  } finally {
    await restarted.stop();
    await smtp.close();
  }

  const recorded = await pool.query<{ order_id: string; count: number }>(
    `select order_id, count(*)::int as count from email_deliveries
     where order_id = any($1::text[]) group by order_id`,
    [order_ids],
  );
  assert.equal(recorded.rowCount, ORDERS, "a delivery recorded for every order");
  assert.ok(recorded.rows.every((row) => row.count === 1));

  const received = new Map<string, number>();
  for (const message of smtp.messages) {
    const ids = messageIdsOf(message.raw);
    assert.equal(ids.length, 1, "one Message-ID naming its order");
    received.set(ids[0]!, (received.get(ids[0]!) ?? 0) + 1);
  }
  assert.deepEqual([...received.keys()].sort(), [...order_ids].sort(), "every order's email received");
  const repeated = [...received.values()].filter((count) => count > 1);
  assert.ok(
    repeated.every((count) => count === 2),
    "a repeat is a send in flight at the kill, resent once",
  );
  assert.ok(
    repeated.length <= CONCURRENCY,
    `${repeated.length} repeated: at most the ${CONCURRENCY} sends in flight at the kill (${killed_with} received by then)`,
  );
});

// Crash safety of a new eSIM purchase: the process is SIGKILLed at the worst moments, the
// carrier process goes away, and every time the order ends exactly once: one completed order,
// one posted transfer, one provisioning at the carrier and one email.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { startSimulatorProcess } from "./support/simulator.ts";
import { balance, call, createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const world = await createWorld({ services: 0 });
const db = createKysely<Database>(world.database.pool);

async function exactlyOnce(cart_key: string, partner_key: string, credit: number, url: string) {
  const orders = await sql<{ order_id: string; status: string; total_minor: number }>`
    select order_id, status, total_minor from orders where cart_key = ${cart_key}`.execute(db);
  assert.equal(orders.rows.length, 1, "one order for the cart");
  const order = orders.rows[0]!;
  assert.equal(order.status, "completed");
  const transfers = await sql<{
    state: string;
  }>`select state from ledger_transfers where reference = ${order.order_id}`.execute(db);
  assert.deepEqual(transfers.rows, [{ state: "posted" }]);
  assert.equal(await balance(url, partner_key), credit - order.total_minor);
  const audit = await world.simulator.audit();
  assert.equal(
    audit.provisionings.filter((p) => p.reference === order.order_id).length,
    1,
    "one provisioning",
  );
  const retry = await submit(url, partner_key, cart_key);
  assert.equal(retry.status, 200);
  assert.equal(retry.body.orderID, order.order_id);
  const iccid = retry.body.purchases[0].iccid;
  await waitFor("the email", async () => world.smtp.messages.some((m) => m.raw.includes(iccid)));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(world.smtp.messages.filter((m) => m.raw.includes(iccid)).length, 1, "one email");
  assert.deepEqual((await auditLedger(db)).breaches, []);
}

for (const point of ["after_pending_commit", "after_carrier_answer", "after_completion_commit"] as const) {
  test(`killed ${point.replaceAll("_", " ")}, restarted: exactly one order, debit, provisioning and email`, async () => {
    const doomed = await world.startService({ CRASH_AT: point });
    const partner = await newPartner(doomed.url, 100_00);
    const cart = await newCart(doomed.url, partner.api_key);
    await assert.rejects(
      submit(doomed.url, partner.api_key, cart.cart_key),
      "the request dies with its process",
    );
    await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
    const pending = await sql<{
      status: string;
    }>`select status from orders where cart_key = ${cart.cart_key}`.execute(db);
    assert.equal(pending.rows.length, 1, "the pending order was committed before the crash");

    const restarted = await world.startService();
    try {
      // Nobody retries: the resolver job alone must finish the order.
      await waitFor(
        "the resolver",
        async () =>
          (
            await sql<{
              status: string;
            }>`select status from orders where cart_key = ${cart.cart_key}`.execute(db)
          ).rows[0]!.status === "completed",
        30_000,
      );
      await exactlyOnce(cart.cart_key, partner.api_key, 100_00, restarted.url);
    } finally {
      await restarted.stop();
    }
  });
}

test("a client that retries right after the crash gets 409 until the lease expires or its holder stops beating, then the same order", async () => {
  const doomed = await world.startService({ CRASH_AT: "after_pending_commit" });
  const partner = await newPartner(doomed.url, 100_00);
  const cart = await newCart(doomed.url, partner.api_key);
  await assert.rejects(submit(doomed.url, partner.api_key, cart.cart_key));
  const survivor = await world.startService({ RESOLVE_AFTER_MS: "600000" });
  try {
    const early = await submit(survivor.url, partner.api_key, cart.cart_key);
    assert.ok(early.status === 409 || early.status === 200, String(early.status));
    const done = await waitFor("the retry to drive the abandoned order", async () => {
      const retry = await submit(survivor.url, partner.api_key, cart.cart_key);
      return retry.status === 200 ? retry : null;
    });
    assert.equal(done.body.status, "completed");
    await exactlyOnce(cart.cart_key, partner.api_key, 100_00, survivor.url);
  } finally {
    await survivor.stop();
  }
});

test("the carrier process down, then up on the same address: the order completes exactly once", async () => {
  const service = await world.startService();
  try {
    const partner = await newPartner(service.url, 100_00);
    const cart = await newCart(service.url, partner.api_key);
    const port = new URL(world.simulator.url).port;
    const apiKey = world.simulator.apiKey;
    await world.simulator.stop();
    const down = await submit(service.url, partner.api_key, cart.cart_key);
    assert.equal(down.status, 503);
    assert.equal(down.body.code, "carrier_unavailable");
    const held = await call(service.url, "GET", "/v1/profile/wallet", { key: partner.api_key });
    assert.ok(
      held.body.pending.amount_minor > 0,
      "the money is held, not spent, while the outcome is unknown",
    );
    world.simulator = await startSimulatorProcess({
      databaseUrl: world.database.url,
      apiKey,
      env: { SIMULATOR_PORT: port, SIMULATOR_SLOW_MS: "4000" },
      stopAfterTests: true,
    });
    await waitFor(
      "the resolver",
      async () =>
        (
          await sql<{ status: string }>`select status from orders where cart_key = ${cart.cart_key}`.execute(
            db,
          )
        ).rows[0]!.status === "completed",
      30_000,
    );
    await exactlyOnce(cart.cart_key, partner.api_key, 100_00, service.url);
  } finally {
    await service.stop();
  }
});

// Crash safety of a refund: the process is SIGKILLed at each of the refund's crash points and
// restarted; nobody retries, and the sweep alone (or nothing, when the refund had committed)
// leaves the order refunded with exactly one credit of its total, cancelled at the carrier once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { balance, call, createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const world = await createWorld({ services: 0, env: { REFUND_SWEEP_INTERVAL_MS: "200" } });
const db = createKysely<Database>(world.database.pool);

async function orderStatus(order_id: string): Promise<string> {
  const rows = await sql<{ status: string }>`select status from orders where order_id = ${order_id}`.execute(
    db,
  );
  return rows.rows[0]!.status;
}

for (const point of ["after_refund_intent_commit", "after_cancel_answer", "after_refund_commit"] as const) {
  test(`killed ${point.replaceAll("_", " ")}, restarted: refunded once, credited its total once`, async () => {
    const doomed = await world.startService({ CRASH_AT: point });
    const partner = await newPartner(doomed.url, 100_00);
    const cart = await newCart(doomed.url, partner.api_key, "fr-1gb-7d");
    const bought = await submit(doomed.url, partner.api_key, cart.cart_key);
    assert.equal(bought.status, 200);
    const order_id = bought.body.orderID as string;
    const paid = bought.body.total.amount_minor as number;
    await assert.rejects(
      call(doomed.url, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key }),
      "the request dies with its process",
    );
    await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
    const intent = await sql<{ state: string }>`
      select state from order_refunds where order_id = ${order_id}`.execute(db);
    assert.equal(intent.rows.length, 1, "the intent was committed before the carrier was asked");

    const restarted = await world.startService();
    try {
      await waitFor("the sweep", async () => (await orderStatus(order_id)) === "refunded", 30_000);
      assert.equal(await balance(restarted.url, partner.api_key), 100_00);
      const again = await call(restarted.url, "POST", `/v1/orders/${order_id}/refund`, {
        key: partner.api_key,
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.status, "refunded");
      assert.equal(await balance(restarted.url, partner.api_key), 100_00, "no second credit");
      const refunds = await sql<{ amount_minor: number }>`
        select amount_minor from ledger_transfers where kind = 'refund' and reference = ${order_id}`.execute(
        db,
      );
      assert.deepEqual(refunds.rows, [{ amount_minor: paid }]);
      const cancelled = (await world.simulator.audit()).cancellations.filter((c) => c.reference === order_id);
      assert.equal(cancelled.length, 1, "cancelled at the carrier once");
      const events = await sql<{ n: number }>`
        select count(*)::int as n from events where type = 'order.refunded' and data->>'orderID' = ${order_id}`.execute(
        db,
      );
      assert.equal(events.rows[0]!.n, 1, "one order.refunded event");
      assert.deepEqual((await auditLedger(db)).breaches, []);
    } finally {
      await restarted.stop();
    }
  });
}

// The safety net under the resolver: a pending order whose resolver job is gone (ran out of
// attempts, deleted by hand) gets one back from requeue_pending_orders.
import assert from "node:assert/strict";
import { test } from "node:test";
import { quickAddJob, runOnce } from "graphile-worker";
import { sql } from "kysely";
import { silentWorkerLogger } from "../src/db/migrate.ts";
import { requeuePendingOrdersTask } from "../src/orders/resolve-pending-order.ts";
import { newId } from "../src/shared/ids.ts";
import { createTestApp } from "./support/app.ts";

const app = await createTestApp({ resolve_after_ms: 60_000, carrier_timeout_ms: 1_000 });

async function pendingOrder(partner_id: string, age: string, lease: "expired" | "held"): Promise<string> {
  const order_id = newId("order");
  await sql`
    insert into orders (order_id, partner_id, type, status, package_id, external_package_id, data_mb, validity_days,
                        total_minor, currency, email, phone, first_name, last_name, iccid, created_at, lease_until)
    values (${order_id}, ${partner_id}, 'topup', 'pending', 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 1024, 7, 350, 'USD',
            'a@example.com', '+14155550123', 'A', 'B', '8901260000000000001', now() - ${age}::interval,
            ${lease === "expired" ? sql`now() - interval '1 second'` : sql`now() + interval '1 minute'`})`.execute(
    app.db,
  );
  return order_id;
}

test("requeue_pending_orders gives abandoned pending orders their resolver job back, and only them", async () => {
  const partner = await app.createPartner();
  const abandoned = await pendingOrder(partner.partner_id, "10 minutes", "expired");
  const young = await pendingOrder(partner.partner_id, "5 seconds", "expired");
  const driven = await pendingOrder(partner.partner_id, "10 minutes", "held");
  const resolved: string[] = [];
  await quickAddJob({ pgPool: app.database.pool }, "requeue_pending_orders", {});
  const taskList = {
    requeue_pending_orders: requeuePendingOrdersTask(app.ctx),
    resolve_pending_order: async (payload: unknown) => {
      resolved.push((payload as { order_id: string }).order_id);
    },
  };
  await runOnce({ pgPool: app.database.pool, taskList, logger: silentWorkerLogger });
  assert.deepEqual(resolved, [abandoned]);
  assert.ok(!resolved.includes(young) && !resolved.includes(driven));
});

// A purchase's completing update is HOT (migration 0046): PostgreSQL rewrites the order's row on its
// page and writes no index entry, because no index of orders reads a column the completion changes.
// Shown two ways: no index definition names those columns, and the completion of a real pending
// order, run by the service's own statements, counts as a HOT update in its transaction, while the
// same completion with an index on `iccid` does not (the control: the count can tell the difference).
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "../src/db/schema.ts";
import { completeOrder, insertPendingOrderAhead } from "../src/orders/orders.sql.ts";
import { newId } from "../src/shared/ids.ts";
import { createTestApp } from "./support/app.ts";
import { createCart, PACKAGE_ID } from "./support/fixtures.ts";

const app = await createTestApp();
const partner = await app.createPartner();

/** What orders.sql.ts's completeOrder and markFailed write on a pending order. */
const COMPLETION_WRITES = [
  "status",
  "iccid",
  "resolved_at",
  "lease_until",
  "failure_code",
  "carrier_refusal",
];

test("no index of orders reads a column the completion or the failure of an order writes", async () => {
  const indexes = await sql<{ name: string; definition: string }>`
    select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as definition
    from pg_index where indrelid = 'orders'::regclass`.execute(app.db);
  assert.ok(indexes.rows.length >= 8, "the orders' indexes were read");
  for (const { name, definition } of indexes.rows) {
    for (const column of COMPLETION_WRITES) {
      assert.doesNotMatch(
        definition,
        new RegExp(`\\b${column}\\b`),
        `${name} reads ${column}: ${definition}`,
      );
    }
  }
});

class RolledBack extends Error {}

async function updateCounts(trx: Transaction<Database>): Promise<{ updated: number; hot: number }> {
  const stats = await sql<{ updated: string; hot: string }>`
    select pg_stat_get_xact_tuples_updated('orders'::regclass) as updated,
           pg_stat_get_xact_tuples_hot_updated('orders'::regclass) as hot`.execute(trx);
  return { updated: Number(stats.rows[0]?.updated), hot: Number(stats.rows[0]?.hot) };
}

/** A pending new-eSIM order for a real cart, completed, in one transaction rolled back after. */
async function completionCounts(
  db: Kysely<Database>,
  before?: (trx: Transaction<Database>) => Promise<void>,
) {
  const { cart_key } = await createCart(app.app, partner.api_key);
  let counts: { updated: number; hot: number } | null = null;
  await db
    .transaction()
    .execute(async (trx) => {
      await before?.(trx);
      const order_id = newId("order");
      const pending = await insertPendingOrderAhead(
        trx,
        {
          order_id,
          partner_id: partner.partner_id,
          type: "esim",
          quantity: 1,
          cart_key,
          package_id: PACKAGE_ID,
          external_package_id: "CARRIER-FR-1GB-7D",
          data_mb: 1024,
          validity_days: 7,
          start_date: null,
          total_minor: 450,
          currency: "USD",
          client_reference: null,
          email: "ana@example.com",
          phone: "+14155550123",
          first_name: "Ana",
          last_name: "Lima",
          iccid: null,
          language: "en",
          supplier: "carrier",
        },
        {
          lease_ms: { carrier: 30_000, airalo: 30_000, esimgo: 30_000 },
          resolve_after_ms: 60_000,
          lease_holder: null,
        },
      );
      assert.ok(await pending.order(), "the order was inserted");
      // The counters include what this backend has not reported yet (earlier transactions): a delta.
      const start = await updateCounts(trx);
      const listed = await sql`select 1 from pending_orders where order_id = ${order_id}`.execute(trx);
      assert.equal(listed.rows.length, 1, "a pending order is listed for the resolver");
      const completed = await completeOrder(trx, {
        order_id,
        iccid: "8901260999999999994",
        profile: { smdp_address: "smdp.example", activation_code: "K2-HOT" },
        first_sync_after_s: 3600,
        confirmation_email: true,
      });
      assert.equal(completed?.status, "completed");
      const unlisted = await sql`select 1 from pending_orders where order_id = ${order_id}`.execute(trx);
      assert.equal(unlisted.rows.length, 0, "a completed order is no longer listed");
      const end = await updateCounts(trx);
      counts = { updated: end.updated - start.updated, hot: end.hot - start.hot };
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  assert.ok(counts !== null);
  return counts as { updated: number; hot: number };
}

test("the completion of a new eSIM's order is one HOT update", async () => {
  assert.deepEqual(await completionCounts(app.db), { updated: 1, hot: 1 });
});

test("control: with an index on iccid, as before migration 0046, the same completion is not HOT", async () => {
  const counts = await completionCounts(app.db, async (trx) => {
    await sql`create index orders_iccid_control_idx on orders (iccid)`.execute(trx);
  });
  assert.deepEqual(counts, { updated: 1, hot: 0 });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { MAX_DATA_BYTES, recordEvent } from "../src/events/record-event.ts";
import type { OrderRow } from "../src/orders/order.ts";
import { renderOrder } from "../src/orders/render-order.ts";
import { createTestApp } from "./support/app.ts";

const app = await createTestApp();

test("an event is recorded only with the transaction that makes its change: a rollback leaves none", async () => {
  const partner = await app.createPartner();
  await assert.rejects(
    app.db.transaction().execute(async (trx) => {
      await recordEvent(trx, { partner_id: partner.partner_id, type: "webhook.test", data: { n: 1 } });
      throw new Error("the change failed");
    }),
    /the change failed/,
  );
  const id = await app.db
    .transaction()
    .execute((trx) =>
      recordEvent(trx, { partner_id: partner.partner_id, type: "webhook.test", data: { n: 2 } }),
    );
  assert.match(id ?? "", /^evt_[A-Za-z0-9_-]{22}$/);
  const rows = await sql<{ event_id: string; data: unknown }>`
    select event_id, data from events where partner_id = ${partner.partner_id}`.execute(app.db);
  assert.deepEqual(rows.rows, [{ event_id: id, data: { n: 2 } }]);
});

test("a once-only fact recorded twice, even concurrently, is one event", async () => {
  const partner = await app.createPartner();
  const record = () =>
    app.db.transaction().execute((trx) =>
      recordEvent(trx, {
        partner_id: partner.partner_id,
        type: "esim.usage_threshold",
        data: { threshold_percent: 80 },
        dedup_key: "usage:ord_x:80",
      }),
    );
  const ids = await Promise.all([record(), record(), record()]);
  assert.equal(ids.filter((id) => id !== null).length, 1);
  const count = await sql<{ n: number }>`
    select count(*)::int as n from events where partner_id = ${partner.partner_id}`.execute(app.db);
  assert.equal(count.rows[0]!.n, 1);
});

test("a group order of 50 eSIMs with the longest SM-DP+ addresses and codes fits an order.completed event", async () => {
  const partner = await app.createPartner();
  const smdp_address = `${"s".repeat(240)}.example.com`.slice(0, 253);
  const activation_code = "A".repeat(255);
  const purchases = Array.from({ length: 50 }, (_, position) => ({
    order_id: "ord_group",
    position,
    package_id: "p".repeat(64),
    iccid: `8901260${String(position).padStart(13, "0")}`,
    smdp_address,
    activation_code,
    start_date: "2026-12-01",
  }));
  const order = {
    order_id: "ord_group",
    type: "esim",
    status: "completed",
    client_reference: "r".repeat(128),
    language: "pt-BR",
    quantity: 50,
    total_minor: 50_000_00,
    currency: "USD",
    created_at: new Date(),
    iccid: purchases[0]!.iccid,
    refunded_at: null,
    refund_requested_at: null,
  } as unknown as OrderRow;
  const data = renderOrder(order, purchases);
  assert.ok(JSON.stringify(data).length > 32 * 1024, "larger than the bound was before group orders");
  const id = await app.db
    .transaction()
    .execute((trx) => recordEvent(trx, { partner_id: partner.partner_id, type: "order.completed", data }));
  assert.ok(id, "recorded");
  assert.ok(JSON.stringify(data).length <= MAX_DATA_BYTES);
});

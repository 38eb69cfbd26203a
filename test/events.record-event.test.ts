import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { recordEvent } from "../src/events/record-event.ts";
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

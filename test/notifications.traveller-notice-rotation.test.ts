// The traveller notice sweep's partners (review of issue 35): past one round's bound, each round
// takes the partners after the last one it looked at, wrapping around, so every partner with notices
// on gets its turn. Real PostgreSQL, settings written over real HTTP, the sweep's real queries; the
// round is run with a bound of 2 partners instead of 1,000.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Transaction } from "kysely";
import type { Database } from "../src/db/schema.ts";
import { markBundlesForNotice } from "../src/esims/mark-bundles-for-notice.ts";
import { type NoticeKind, queueTravellerNotices } from "../src/notifications/send-traveller-notices.ts";
import { ordersForEmail } from "../src/orders/order-for-email.ts";
import { loadSenders, partnersWithNotices } from "../src/partners/traveller-settings.ts";
import { createTestApp } from "./support/app.ts";
import { request } from "./support/http.ts";

const app = await createTestApp();
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

test("with more partners than a round takes, rounds go on from the last partner and wrap around", async () => {
  const partners: string[] = [];
  for (const name of ["One", "Two", "Three", "Four", "Five"]) {
    const partner = await app.createPartner(`Notices ${name}`);
    const put = await request(base, "PUT", "/v1/profile/notifications", {
      key: partner.api_key,
      body: { traveller_usage_emails: name !== "Four" },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    if (name !== "Four") partners.push(partner.partner_id);
  }
  partners.sort();
  const looked_at: string[][] = [];
  const deps = {
    db: app.db,
    pool: app.database.pool,
    mailer: { send: () => Promise.reject(new Error("unused")), close: async () => undefined },
    partnersWithNotices: (after: string | null, limit: number) => partnersWithNotices(app.db, after, limit),
    rotation: { after: null },
    partners_per_round: 2,
    markDueBundles: (trx: Transaction<Database>, kind: NoticeKind, ids: readonly string[], limit: number) => {
      if (kind === "usage_80") looked_at.push([...ids]);
      return markBundlesForNotice(trx, kind, ids, limit);
    },
    findOrders: (ids: string[]) => ordersForEmail(app.db, ids, "http://unused.example"),
    findSenders: (ids: string[]) => loadSenders(app.db, ids),
    public_base_url: "http://unused.example",
    log: { info: () => undefined, warn: () => undefined },
  };
  for (let round = 0; round < 3; round++) await queueTravellerNotices(deps, 10);
  const [a, b, c, d] = partners;
  assert.deepEqual(looked_at, [
    [a, b],
    [c, d],
    [a, b], // the third round wraps around to the first partners
  ]);
});

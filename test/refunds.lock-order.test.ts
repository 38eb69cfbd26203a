// A refund's transaction and a top-up's completion on the same eSIM run side by side: they must
// take their row locks in one order, or PostgreSQL breaks the cycle by aborting one of them (a 500
// to the partner, the refund or the top-up left for a sweep). A top-up's completion takes the eSIM
// row first (pullSoonLater: pullSoon's update, sent with the completion's statement and run before
// it), then the wallet (its hold posted); a refund must not hold the wallet while it waits for the
// eSIM. The test takes the lock with pullSoon, at once, to hold it while the refund queues.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { pullSoon } from "../src/esims/sync-esims.ts";
import { walletOf } from "../src/ledger/accounts.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { balance, call, createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const world = await createWorld({ services: 1 });
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);

/** A backend of this database waiting for the eSIM's row lock (finish-refund.ts: lockEsimForRefund). */
async function refundWaitsForTheEsim(): Promise<boolean> {
  const waiting = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and query ilike '%from esims where iccid%for no key update%'`.execute(
    db,
  );
  return (waiting.rows[0]?.n ?? 0) > 0;
}

test("an eSIM's refund and a top-up completing on it: both commit, no deadlock", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const bought = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const order_id = bought.body.orderID as string;
  const iccid = bought.body.purchases[0].iccid as string;

  let refunding: ReturnType<typeof call> | null = null;
  await db.transaction().execute(async (trx) => {
    // The completion of a top-up of this eSIM, in its own order: the eSIM row first ...
    await pullSoon(trx, iccid);
    refunding = call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
    await waitFor("the refund to wait for the eSIM row", refundWaitsForTheEsim);
    // ... then the wallet, as posting its hold does.
    assert.ok(await walletOf(trx, partner.partner_id, true));
  });
  const answer = await refunding!;
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.status, "refunded");
  assert.equal(await balance(api, partner.api_key), 100_00);
  assert.deepEqual((await auditLedger(db)).breaches, []);
});

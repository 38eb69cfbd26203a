// A refund's transaction and a top-up's completion on the same eSIM run side by side: they must
// take their row locks in one order, or PostgreSQL breaks the cycle by aborting one of them (a 500
// to the partner, the refund or the top-up left for a sweep). A top-up's completion takes the eSIM
// row first (pullSoonLater: pullSoon's update, sent with the completion's statement and run before
// it), then the wallet (its hold posted); a refund must not hold the wallet while it waits for the
// eSIM. The test takes the lock with pullSoon, at once, to hold it while the refund queues.
// Should a deadlock still happen (the second test makes one on purpose), the partner gets a 503 to
// retry, never a 500 (shared/database-busy.ts), and the refund is not lost.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { pullSoon } from "../src/esims/sync-esims.ts";
import { walletOf } from "../src/ledger/accounts.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import {
  type Answer,
  balance,
  buyEsim,
  call,
  createWorld,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

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

test("a deadlock that still happens in a refund is 503 service_unavailable with Retry-After, never a 500; the sweep finishes it", async () => {
  const { partner, bought, order_id, iccid } = await buyEsim(api, 100_00);
  let refunding: Promise<Answer> | null = null;
  // A writer that breaks the lock order on purpose (none of ours does): the eSIM, then the order.
  await db.transaction().execute(async (trx) => {
    // This side waits longest before it looks for a deadlock: the refund is the one aborted.
    await sql`set local deadlock_timeout = '30s'`.execute(trx);
    await sql`select 1 from esims where iccid = ${iccid} for no key update`.execute(trx);
    refunding = call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
    await waitFor("the refund to wait for the eSIM row", refundWaitsForTheEsim);
    await sql`select 1 from orders where order_id = ${order_id} for update`.execute(trx);
  });
  const answer = await refunding!;
  assert.equal(answer.status, 503, JSON.stringify(answer.body));
  assert.equal(answer.body.code, "service_unavailable");
  assert.ok(Number(answer.headers.get("retry-after")) > 0, "Retry-After says when");
  assert.deepEqual(
    (await call(api, "GET", "/v1/profile/wallet", { key: partner.api_key })).body.balance.amount_minor,
    100_00 - bought.body.total.amount_minor,
    "nothing credited by the aborted transaction",
  );
  // The intent survived the abort: once its lease runs out the sweep (or a retry) finishes it, once.
  const refunded = await waitFor(
    "the refund's end",
    async () => {
      const order = await call(api, "GET", `/v1/orders/${order_id}`, { key: partner.api_key });
      return order.body.status === "refunded" ? order : null;
    },
    30_000,
  );
  assert.equal(refunded.body.status, "refunded");
  const wallet = await call(api, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(wallet.body.balance.amount_minor, 100_00);
});

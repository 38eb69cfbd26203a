// An operator's "cancelled" on a held refund (settle-held-refund.ts) is refused when our own records
// already say the profile reached a device: "a download notification outranks the operator". An
// installation notification (HandleDownloadProgressInfo 4) is applied to the eSIM before it is
// recorded among the SM-DP+'s notifications (receive-download-progress.ts), and a crash or an
// error between the two leaves the eSIM `installed` with no notification row until the SM-DP+
// sends it again; a pull can say so too. Settled "cancelled" then, the refund credited the wallet
// for a profile on the traveller's phone and overwrote the eSIM with `cancelled`.
// The service runs as a process against the carrier simulator; the settle runs in this process
// with a carrier whose held cancel is recorded as the ES2+ adapter records it (settle-cancel.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import type { CancelRequest, CancelVerdict, Carrier, SettledCancel } from "../src/carrier/carrier.ts";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { applySignal } from "../src/esims/apply-signal.ts";
import { HeldRefundNotSettled, settleHeldRefund } from "../src/refunds/settle-held-refund.ts";
import { balance, buyEsim, call, createWorld, workerContext, worldCarrier } from "./support/world.ts";

const world = await createWorld({ env: { REFUND_SWEEP_INTERVAL_MS: "600000" } });
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const http = worldCarrier(world);
/** The held cancels recorded "cancelled" by the operator, as the ES2+ adapter would record them. */
const settled: string[] = [];
const settleHeldCancel = async (request: CancelRequest, verdict: CancelVerdict): Promise<SettledCancel> => {
  if (verdict === "cancelled") settled.push(request.reference);
  return "settled";
};
const carrier = new Proxy(http, {
  get(target, name) {
    if (name === "settleHeldCancel") return settleHeldCancel;
    const value = Reflect.get(target, name, target);
    return typeof value === "function" ? value.bind(target) : value;
  },
}) as Carrier;
const operator = workerContext(world, carrier);

test("a held refund of an eSIM our records show installed: the operator's 'cancelled' is refused, nothing credited", async () => {
  const { partner, order_id, iccid } = await buyEsim(api, 100_00);
  const after_purchase = await balance(api, partner.api_key);

  // The refund's cancel gets no answer: the refund stays refunding, nothing credited (as when held).
  await world.simulator.control({ down: true });
  try {
    const first = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
    assert.equal(first.status, 503, JSON.stringify(first.body));
  } finally {
    await world.simulator.control({ down: false });
  }
  // The SM-DP+'s installation notification, applied to the eSIM (its row in smdp_notifications not
  // written yet: the request that carried it died in between).
  const at = new Date().toISOString();
  const applied = await applySignal(
    operator,
    { iccid, as_of: at, profile: { state: "installed", installed_at: at, deleted_at: null }, bundles: [] },
    "callback",
  );
  assert.equal(applied.kind, "applied");

  await assert.rejects(
    settleHeldRefund(operator, order_id, "cancelled"),
    (error: unknown) => error instanceof HeldRefundNotSettled && error.code === "conflict",
  );
  assert.deepEqual(settled, [], "the verdict is not recorded at the carrier");
  const rows = await sql<{ order: string; esim: string }>`
    select o.status as order, e.status as esim from orders o join esims e on e.iccid = o.iccid
    where o.order_id = ${order_id}`.execute(db);
  assert.deepEqual(rows.rows, [{ order: "completed", esim: "installed" }]);
  assert.equal(await balance(api, partner.api_key), after_purchase, "nothing credited");
});

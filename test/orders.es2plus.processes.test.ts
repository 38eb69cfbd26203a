// A purchase with profiles from an SM-DP+ (CARRIER_PROFILES=es2plus), end to end through real
// processes: the service, the SM-DP+ simulator over mutual TLS, the bundle simulator, SMTP.
// DownloadOrder -> ConfirmOrder -> RELEASED with the right activation code; the SM-DP+'s
// notifications 3 and 4 make the eSIM installed; a SIGKILL between DownloadOrder and ConfirmOrder
// and a dropped DownloadOrder or ConfirmOrder answer each end with the eSIM and one profile for the
// order, against an SM-DP+ answering a repeated DownloadOrder as SGP.22 says (3.3) and as some
// vendors do (3.7).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { importInventory } from "../src/carrier/es2plus/import-inventory.ts";
import { iccidRange } from "../src/lib/iccid-range.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";
import { request } from "./support/http.ts";
import { addPerson, signInCookie } from "./support/people.ts";
import { startServiceProcess } from "./support/service.ts";
import { REQUESTER_ID, SMDP_ADDRESS, startSmdpProcess } from "./support/smdp.ts";
import { makeCertificates } from "./support/tls.ts";
import { balance, call, createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const PROFILE_TYPE = "FR_1GB";
const payload = "894450000000100000";
const FIRST_ICCID = `${payload}${luhnCheckDigit(payload)}`;
const CALLBACK_TOKEN = `smdp-${randomBytes(12).toString("hex")}`;
const CALLBACK_PATH = "/gsma/rsp2/es2plus/handleDownloadProgressInfo";

const world = await createWorld({ services: 0 });
const certs = makeCertificates();
const smdp = await startSmdpProcess({ databaseUrl: world.database.url, certs });
const es2plusEnv = {
  CARRIER_PROFILES: "es2plus",
  ES2PLUS_URL: smdp.url,
  ES2PLUS_REQUESTER_ID: REQUESTER_ID,
  ES2PLUS_CLIENT_CERT_FILE: certs.client.cert_file,
  ES2PLUS_CLIENT_KEY_FILE: certs.client.key_file,
  ES2PLUS_CA_FILE: certs.ca_file,
  ES2PLUS_SMDP_ADDRESS: SMDP_ADDRESS,
  ES2PLUS_CALLBACK_TOKEN: CALLBACK_TOKEN,
  // The buy-then-refund loop below meets the bound after a few cycles; the 50 ICCIDs are "low".
  REFUNDS_PER_PARTNER_PER_HOUR: "3",
  PROFILE_INVENTORY_LOW_THRESHOLD: "1000",
};
await smdp.load(PROFILE_TYPE, FIRST_ICCID, 50);
await importInventory(world.database.pool, {
  external_package_id: "CARRIER-FR-1GB-7D",
  profile_type: PROFILE_TYPE,
  first_iccid: FIRST_ICCID,
  count: 50,
});
const service = await world.startService(es2plusEnv);
await smdp.control({ callback_url: `${service.url}${CALLBACK_PATH}`, callback_token: CALLBACK_TOKEN });

/** The order's ICCID in our inventory: exactly one taken per order. */
async function takenFor(order_id: string): Promise<string[]> {
  const rows = await world.database.pool.query("select iccid from es2plus_inventory where reference = $1", [
    order_id,
  ]);
  return rows.rows.map((row) => row.iccid as string);
}

async function oneProfileFor(order_id: string, purchase: { iccid: string; activation_code: string }) {
  assert.deepEqual(await takenFor(order_id), [purchase.iccid], "one ICCID taken for the order");
  const released = (await smdp.audit()).released.filter((profile) => profile.iccid === purchase.iccid);
  assert.equal(released.length, 1);
  assert.equal(released[0]!.matching_id, purchase.activation_code);
  const transitions = await world.database.pool.query(
    "select count(*)::int as n from smdp_sim.transitions where iccid = $1 and function = 'downloadOrder'",
    [purchase.iccid],
  );
  assert.equal(transitions.rows[0].n, 1, "one DownloadOrder took effect");
}

test("a purchase goes DownloadOrder -> ConfirmOrder -> RELEASED; its QR code is LPA:1$<smdpAddress>$<matchingId>", async () => {
  const partner = await newPartner(service.url, 100_00);
  const cart = await newCart(service.url, partner.api_key);
  const answer = await submit(service.url, partner.api_key, cart.cart_key);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const purchase = answer.body.purchases[0];
  const at_smdp = await smdp.profile(purchase.iccid);
  assert.equal(at_smdp?.state, "RELEASED");
  assert.equal(purchase.activation_code, at_smdp?.matching_id);
  assert.equal(purchase.smdp_address, SMDP_ADDRESS);
  assert.equal(purchase.qr_code, `LPA:1$${SMDP_ADDRESS}$${at_smdp?.matching_id}`);
  await oneProfileFor(answer.body.orderID, purchase);
  assert.equal(
    (await world.simulator.profile(purchase.iccid))?.reference,
    answer.body.orderID,
    "the plan is attached",
  );
});

test("the SM-DP+'s notifications 3 and 4 make the eSIM installed; repeats are ignored, failures recorded", async () => {
  const partner = await newPartner(service.url, 100_00);
  const cart = await newCart(service.url, partner.api_key);
  const purchase = (await submit(service.url, partner.api_key, cart.cart_key)).body.purchases[0];
  await smdp.control({ callback_duplicate_share: 1 });
  try {
    assert.equal((await smdp.event(purchase.iccid, "fail_eligibility")).status, 200);
    assert.equal((await smdp.event(purchase.iccid, "install")).status, 200);
    await waitFor("the eSIM to be installed", async () => {
      const esim = await call(service.url, "GET", `/v1/esims/${purchase.iccid}`, { key: partner.api_key });
      return esim.body.status === "installed";
    });
  } finally {
    await smdp.control({ callback_duplicate_share: 0 });
  }
  await waitFor("every notification", async () => {
    const rows = await world.database.pool.query("select 1 from smdp_notifications where iccid = $1", [
      purchase.iccid,
    ]);
    return rows.rows.length === 5;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const rows = await world.database.pool.query(
    "select notification_point_id as point, status, subject_code from smdp_notifications where iccid = $1 order by id",
    [purchase.iccid],
  );
  // Each once, in whatever order they arrived: the simulator's notifier retries each on its own,
  // so on a busy machine the failed eligibility may land after the install's first points.
  assert.deepEqual(
    rows.rows.map((row) => `${row.point}:${row.status}`).sort(),
    ["1:Executed-Success", "1:Failed", "2:Executed-Success", "3:Executed-Success", "4:Executed-Success"],
    "each once although each was sent twice",
  );
  const events = await world.database.pool.query(
    "select type from events where type = 'esim.installed' and data->>'iccid' = $1",
    [purchase.iccid],
  );
  assert.equal(events.rows.length, 1);
});

test("sandbox simulate install and delete go through the SM-DP+", async () => {
  const partner = await newPartner(service.url, 100_00);
  const cart = await newCart(service.url, partner.api_key);
  const purchase = (await submit(service.url, partner.api_key, cart.cart_key)).body.purchases[0];
  const path = `/v1/sandbox/esims/${purchase.iccid}/simulate`;
  assert.equal(
    (await call(service.url, "POST", path, { key: partner.api_key, body: { event: "install" } })).status,
    200,
  );
  assert.equal((await smdp.profile(purchase.iccid))?.state, "INSTALLED");
  const deleted = await call(service.url, "POST", path, { key: partner.api_key, body: { event: "delete" } });
  assert.equal(deleted.body.status, "deleted");
  assert.equal((await smdp.profile(purchase.iccid))?.state, "DELETED");
});

/**
 * The answers an SM-DP+ gives a repeated DownloadOrder for our own, already allocated ICCID: SGP.22
 * 5.3.1's 8.2.1/3.3 and the 8.2.1/3.7 of some vendors. Every recovery below runs against both.
 */
const TAKEN_REASONS = ["3.3", "3.7"] as const;

async function asVendor<T>(reason: (typeof TAKEN_REASONS)[number], body: () => Promise<T>): Promise<T> {
  await smdp.control({ download_taken_reason: reason });
  try {
    return await body();
  } finally {
    await smdp.control({ download_taken_reason: "3.3", drop_share: 0, functions: [] });
  }
}

/** The partner's retries until the order is final: it must end with the eSIM, never 502. */
async function retriedToTheEsim(url: string, key: string, cart_key: string) {
  const answer = await waitFor("the order to be final", async () => {
    const again = await submit(url, key, cart_key);
    return again.status === 503 ? null : again;
  });
  assert.equal(answer.status, 200, `the partner gets the eSIM: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The SM-DP+'s profiles by state, to compare before and after one order. */
async function smdpStates(): Promise<Record<string, number>> {
  const { counts } = await smdp.audit();
  return Object.fromEntries(
    ["ALLOCATED", "LINKED", "CONFIRMED", "RELEASED"].map((state) => [state, counts[state] ?? 0]),
  );
}

/**
 * One order's whole mark on the SM-DP+: one more RELEASED profile, and nothing left half-ordered
 * (allocated or confirmed and never released) or released for nobody.
 */
async function onlyOneReleasedSince(before: Record<string, number>) {
  assert.deepEqual(await smdpStates(), { ...before, RELEASED: before.RELEASED! + 1 });
}

for (const reason of TAKEN_REASONS) {
  test(`killed between DownloadOrder and ConfirmOrder, restarted: the resolver finishes with the same ICCID, one profile (SM-DP+ answers ${reason})`, async () => {
    await asVendor(reason, async () => {
      const before = await smdpStates();
      const doomed = await world.startService({ ...es2plusEnv, CRASH_AT: "after_download_order" });
      const partner = await newPartner(doomed.url, 100_00);
      const cart = await newCart(doomed.url, partner.api_key);
      await assert.rejects(
        submit(doomed.url, partner.api_key, cart.cart_key),
        "the request dies with its process",
      );
      await waitFor("the process to die", async () => doomed.process.signalCode === "SIGKILL");
      const pending = await world.database.pool.query("select order_id from orders where cart_key = $1", [
        cart.cart_key,
      ]);
      const order_id = pending.rows[0].order_id as string;
      const [iccid] = await takenFor(order_id);
      assert.equal(
        (await smdp.profile(iccid!))?.state,
        "ALLOCATED",
        "DownloadOrder went through before the kill",
      );
      // Nobody retries: the resolver of the running service finishes the order.
      const status = await waitFor("the resolver to settle the order", async () => {
        const row = await world.database.pool.query("select status from orders where order_id = $1", [
          order_id,
        ]);
        return row.rows[0].status === "pending" ? null : (row.rows[0].status as string);
      });
      assert.equal(status, "completed");
      const body = await retriedToTheEsim(service.url, partner.api_key, cart.cart_key);
      await oneProfileFor(order_id, body.purchases[0]);
      await onlyOneReleasedSince(before);
    });
  });

  test(`a dropped DownloadOrder answer ends with the eSIM and one profile for the order (SM-DP+ answers ${reason})`, async () => {
    await asVendor(reason, async () => {
      const before = await smdpStates();
      const partner = await newPartner(service.url, 100_00);
      const cart = await newCart(service.url, partner.api_key);
      await smdp.control({ drop_share: 1, functions: ["downloadOrder"] });
      const first = await submit(service.url, partner.api_key, cart.cart_key);
      await smdp.control({ drop_share: 0, functions: [] });
      assert.equal(first.status, 503, JSON.stringify(first.body));
      const body = await retriedToTheEsim(service.url, partner.api_key, cart.cart_key);
      await oneProfileFor(body.orderID, body.purchases[0]);
      await onlyOneReleasedSince(before);
    });
  });

  test(`a dropped ConfirmOrder answer ends with the eSIM and one profile for the order (SM-DP+ answers ${reason})`, async () => {
    await asVendor(reason, async () => {
      const before = await smdpStates();
      const partner = await newPartner(service.url, 100_00);
      const cart = await newCart(service.url, partner.api_key);
      await smdp.control({ drop_share: 1, functions: ["confirmOrder"] });
      const first = await submit(service.url, partner.api_key, cart.cart_key);
      await smdp.control({ drop_share: 0, functions: [] });
      assert.equal(first.status, 503, JSON.stringify(first.body));
      const body = await retriedToTheEsim(service.url, partner.api_key, cart.cart_key);
      await oneProfileFor(body.orderID, body.purchases[0]);
      await onlyOneReleasedSince(before);
    });
  });
}

test("HandleDownloadProgressInfo: a wrong token is 401; a malformed or unknown notification is 204", async () => {
  const notification = {
    header: { functionRequesterIdentifier: "smdp", functionCallIdentifier: "x-1" },
    iccid: `${iccidRange(FIRST_ICCID, 50)[49]}F`,
    profileType: PROFILE_TYPE,
    timestamp: new Date().toISOString(),
    notificationPointId: 4,
    notificationPointStatus: { status: "Executed-Success" },
  };
  const wrong = await request(service.url, "POST", CALLBACK_PATH, {
    key: "not-the-token-0123456789",
    body: notification,
  });
  assert.equal(wrong.status, 401);
  const unknown = await request(service.url, "POST", CALLBACK_PATH, {
    key: CALLBACK_TOKEN,
    body: notification,
  });
  assert.equal(unknown.status, 204);
  const malformed = await request(service.url, "POST", CALLBACK_PATH, {
    key: CALLBACK_TOKEN,
    body: { ...notification, notificationPointId: 9 },
  });
  assert.equal(malformed.status, 204);
});

test("the sandbox's built-in SM-DP+ (CARRIER_PROFILES=es2plus, no CARRIER_URL): inventory on demand, mTLS, notifications", async () => {
  const database = await createTestDatabase({ catalog: true });
  const data_dir = await mkdtemp(path.join(os.tmpdir(), "es2plus-sandbox-"));
  const sandbox = await startServiceProcess({
    DATABASE_URL: database.url,
    DATA_DIR: data_dir,
    ADMIN_TOKEN: world.env.ADMIN_TOKEN!,
    CARRIER_PROFILES: "es2plus",
  });
  try {
    const partner = await newPartner(sandbox.url, 100_00);
    const cart = await newCart(sandbox.url, partner.api_key);
    const answer = await submit(sandbox.url, partner.api_key, cart.cart_key);
    assert.equal(answer.status, 200, sandbox.logs().slice(-3000));
    const purchase = answer.body.purchases[0];
    const at_smdp = await database.pool.query(
      "select state, matching_id from smdp_sim.profiles where iccid = $1",
      [purchase.iccid],
    );
    assert.deepEqual(at_smdp.rows, [{ state: "RELEASED", matching_id: purchase.activation_code }]);
    const path_ = `/v1/sandbox/esims/${purchase.iccid}/simulate`;
    const installed = await call(sandbox.url, "POST", path_, {
      key: partner.api_key,
      body: { event: "install" },
    });
    assert.equal(installed.body.status, "installed");
    await waitFor("the SM-DP+'s installation notification", async () => {
      const rows = await database.pool.query(
        "select 1 from smdp_notifications where iccid = $1 and notification_point_id = 4",
        [purchase.iccid],
      );
      return rows.rows.length === 1;
    });
  } finally {
    await sandbox.stop();
    await rm(data_dir, { recursive: true, force: true });
  }
});

// Issue 30: refunds of ES2+ profiles under faults. CancelOrder's 8.2.1/3.5 is "already cancelled"
// or "downloaded"; after our own CancelOrder's answer is lost, a repeat's 3.5 proves neither.

/** A partner with one completed eSIM order; the SM-DP+'s notifications are off until `notify`. */
async function boughtEsim() {
  const partner = await newPartner(service.url, 100_00);
  const cart = await newCart(service.url, partner.api_key);
  const answer = await submit(service.url, partner.api_key, cart.cart_key);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const after_purchase = await balance(service.url, partner.api_key);
  return {
    partner,
    order_id: answer.body.orderID as string,
    iccid: answer.body.purchases[0].iccid as string,
    after_purchase,
  };
}

function refund(key: string, order_id: string) {
  return call(service.url, "POST", `/v1/orders/${order_id}/refund`, { key });
}

/** The SM-DP+'s HandleDownloadProgressInfo, as it sends it (late: after the refund's CancelOrders). */
async function notify(iccid: string, points: number[]) {
  for (const point of points) {
    const answer = await request(service.url, "POST", CALLBACK_PATH, {
      key: CALLBACK_TOKEN,
      body: {
        header: { functionRequesterIdentifier: "smdp", functionCallIdentifier: `late-${iccid}-${point}` },
        iccid: `${iccid}F`,
        profileType: PROFILE_TYPE,
        timestamp: new Date().toISOString(),
        notificationPointId: point,
        notificationPointStatus: { status: "Executed-Success" },
      },
    });
    assert.equal(answer.status, 204);
  }
}

/** Our first CancelOrder's answer is lost (`drop_share`: done, or refused, then the connection dropped). */
async function refundWithCancelAnswerLost(key: string, order_id: string) {
  await smdp.control({ drop_share: 1, functions: ["cancelOrder"] });
  try {
    const first = await refund(key, order_id);
    assert.equal(first.status, 503, JSON.stringify(first.body));
    assert.equal(first.body.code, "carrier_unavailable");
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
}

function settleByAdmin(order_id: string, outcome: "cancelled" | "installed") {
  return call(service.url, "POST", `/admin/orders/${order_id}/refund/settle`, {
    key: world.env.ADMIN_TOKEN,
    body: { outcome },
  });
}

async function metricsText(): Promise<string> {
  return (await fetch(`${service.url}/metrics`)).text();
}

async function orderStatus(order_id: string): Promise<string> {
  const row = await world.database.pool.query("select status from orders where order_id = $1", [order_id]);
  return row.rows[0].status as string;
}

test("a lost CancelOrder answer, then a download notification, then the retry's 3.5: refused esim_installed, nothing credited", async () => {
  const { partner, order_id, iccid, after_purchase } = await boughtEsim();
  // The first CancelOrder never reaches the SM-DP+ (HTTP 500, nothing done); the traveller downloads.
  await smdp.control({ fail_share: 1, functions: ["cancelOrder"] });
  try {
    assert.equal((await refund(partner.api_key, order_id)).status, 503);
  } finally {
    await smdp.control({ fail_share: 0, functions: [] });
  }
  assert.equal((await smdp.event(iccid, "download")).status, 200);
  await waitFor("the download notification", async () => {
    const rows = await world.database.pool.query(
      "select 1 from smdp_notifications where iccid = $1 and notification_point_id = 3",
      [iccid],
    );
    return rows.rows.length === 1;
  });
  const retry = await refund(partner.api_key, order_id);
  assert.equal(retry.status, 409, JSON.stringify(retry.body));
  assert.equal(retry.body.reason, "esim_installed");
  assert.equal(await orderStatus(order_id), "completed");
  assert.equal(await balance(service.url, partner.api_key), after_purchase);
});

test("downloaded while our CancelOrder's answer was lost, the retry's 3.5 before any notification holds the refund (no credit); the late notification refuses it", async () => {
  const { partner, order_id, iccid, after_purchase } = await boughtEsim();
  await smdp.control({ callback_url: null });
  try {
    assert.equal((await smdp.event(iccid, "download")).status, 200);
  } finally {
    await smdp.control({ callback_url: `${service.url}${CALLBACK_PATH}` });
  }
  await refundWithCancelAnswerLost(partner.api_key, order_id);
  // Read as "our cancel went through", this credited the wallet for a profile on the phone.
  const retry = await refund(partner.api_key, order_id);
  // Held, not final: 503 when this retry drove it, 409 when the refund sweep got there first and
  // is backing off (README, "Refunds held"). Either way nothing is credited.
  assert.ok(
    (retry.status === 503 && retry.body.code === "carrier_unavailable") ||
      (retry.status === 409 && retry.body.code === "request_in_progress"),
    JSON.stringify(retry.body),
  );
  assert.equal(await orderStatus(order_id), "completed");
  assert.equal(await balance(service.url, partner.api_key), after_purchase);
  await waitFor("the refund held", async () => /^esim_refunds_held [1-9]/m.test(await metricsText()));
  await notify(iccid, [3]);
  // An operator's "cancelled" now contradicts the SM-DP+'s download notification: refused.
  const contradicted = await settleByAdmin(order_id, "cancelled");
  assert.equal(contradicted.status, 409, JSON.stringify(contradicted.body));
  assert.deepEqual(
    [contradicted.body.code, contradicted.body.reason],
    ["refund_not_allowed", "esim_installed"],
  );
  await waitFor("the held refund to be refused", async () => {
    const answer = await refund(partner.api_key, order_id);
    return answer.status === 409 && answer.body.reason === "esim_installed";
  });
  assert.equal(await orderStatus(order_id), "completed");
  assert.equal(await balance(service.url, partner.api_key), after_purchase);
});

test("our CancelOrder done but its answer lost: the retry's 3.5 holds the refund, the sweep never credits it, the operator's settle credits it once", async () => {
  const { partner, order_id, iccid, after_purchase } = await boughtEsim();
  await refundWithCancelAnswerLost(partner.api_key, order_id);
  assert.equal((await smdp.profile(iccid))?.state, "AVAILABLE", "the SM-DP+ cancelled it");
  // The retry meets the 3.5 and answers 503; while the sweep happens to drive the refund at that
  // moment (a loaded machine), it is 409 request_in_progress first: asked again, as a client would.
  const retry = await waitFor("the retry's answer, not 409", async () => {
    const answer = await refund(partner.api_key, order_id);
    return answer.status === 409 ? null : answer;
  });
  assert.equal(retry.status, 503, JSON.stringify(retry.body));
  // The sweep drives the held refund again and again: silence credits nothing.
  await waitFor("more attempts of the sweep", async () => {
    const row = await world.database.pool.query("select attempts from order_refunds where order_id = $1", [
      order_id,
    ]);
    return row.rows[0].attempts >= 3;
  });
  assert.equal(await orderStatus(order_id), "completed");
  assert.equal(await balance(service.url, partner.api_key), after_purchase);
  const env = { ...world.env, ...es2plusEnv, APP_ENV: "sandbox" };
  const held = await runCli(["refunds", "held", "--json"], env);
  assert.equal(held.code, 0, held.stderr);
  assert.ok(JSON.parse(held.stdout).data.some((row: { order_id: string }) => row.order_id === order_id));
  const settled = await runCli(["refunds", "settle", order_id, "--cancelled", "--json"], env);
  assert.equal(settled.code, 0, settled.stderr);
  await waitFor("the refund", async () => (await orderStatus(order_id)) === "refunded");
  const again = await refund(partner.api_key, order_id);
  assert.equal(again.status, 200);
  assert.equal(again.body.status, "refunded");
  assert.equal(await balance(service.url, partner.api_key), 100_00, "credited exactly once");
  const twice = await runCli(["refunds", "settle", order_id, "--cancelled", "--json"], env);
  assert.equal(twice.code, 1, "nothing held any more");
  const by_admin = await settleByAdmin(order_id, "cancelled");
  assert.equal(by_admin.status, 404, JSON.stringify(by_admin.body));
  assert.equal(by_admin.body.code, "order_not_found");
  assert.equal(await balance(service.url, partner.api_key), 100_00);
});

test("buy-then-refund: each refund returns its profile to the SM-DP+'s pool; past REFUNDS_PER_PARTNER_PER_HOUR a refund is 429 and changes nothing", async () => {
  const partner = await newPartner(service.url, 100_00);
  const returned: string[] = [];
  const refunded_orders: string[] = [];
  let last: { order_id: string; iccid: string } | null = null;
  for (let cycle = 0; cycle < 4; cycle++) {
    const cart = await newCart(service.url, partner.api_key);
    const bought = await submit(service.url, partner.api_key, cart.cart_key);
    assert.equal(bought.status, 200, JSON.stringify(bought.body));
    last = { order_id: bought.body.orderID, iccid: bought.body.purchases[0].iccid };
    if (cycle === 3) break;
    const refunded = await refund(partner.api_key, last.order_id);
    assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
    returned.push(last.iccid);
    refunded_orders.push(last.order_id);
  }
  for (const iccid of returned) {
    const profile = await smdp.profile(iccid);
    assert.deepEqual([profile?.state, profile?.matching_id], ["AVAILABLE", null], "not burnt, code dead");
  }
  const before = await balance(service.url, partner.api_key);
  const over = await call(service.url, "POST", `/v1/orders/${last!.order_id}/refund`, {
    key: partner.api_key,
    headers: { "idempotency-key": "over-the-bound-1" },
  });
  assert.equal(over.status, 429, JSON.stringify(over.body));
  assert.equal(over.body.code, "rate_limited");
  assert.ok(Number(over.headers.get("retry-after")) >= 1);
  assert.equal(await orderStatus(last!.order_id), "completed");
  assert.equal(await balance(service.url, partner.api_key), before);
  assert.equal((await smdp.profile(last!.iccid))?.state, "RELEASED", "the carrier was not asked");
  const intents = await world.database.pool.query("select 1 from order_refunds where order_id = $1", [
    last!.order_id,
  ]);
  assert.equal(intents.rows.length, 0);
  const keys = await world.database.pool.query(
    "select 1 from idempotency_keys where partner_id = $1 and idempotency_key = 'over-the-bound-1'",
    [partner.partner_id],
  );
  assert.equal(keys.rows.length, 0, "the Idempotency-Key is not used up");
  // The contract: refunding an order already refunded returns it again (200), past the bound too,
  // with no second credit.
  const again = await refund(partner.api_key, refunded_orders[0]!);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.status, "refunded");
  assert.equal(await balance(service.url, partner.api_key), before);
  // Another partner is not held back by this one's refunds.
  const other = await boughtEsim();
  assert.equal((await refund(other.partner.api_key, other.order_id)).status, 200);
});

test("low profile inventory is reported: a gauge per package, a warning log line, the operator console, the CLI", async () => {
  // The gauge is sampled at most once a second, and a sweep may still be returning a profile: the
  // gauge and the table agree once both are read after the same moment.
  const free_now = await waitFor("the gauge to show the free profiles the table holds", async () => {
    const text = await metricsText();
    const free = text.match(
      /^esim_profile_inventory_free\{external_package_id="CARRIER-FR-1GB-7D",profile_type="FR_1GB"\} (\d+)/m,
    );
    assert.ok(free, text.slice(0, 2000));
    const taken = await world.database.pool.query(
      "select count(*)::int as n from es2plus_inventory where reference is null and external_package_id = 'CARRIER-FR-1GB-7D'",
    );
    return Number(free[1]) === taken.rows[0].n && { n: taken.rows[0].n as number };
  });
  assert.match(service.logs(), /ES2\+ profile inventory low/);
  const operator = await addPerson(world.database.pool, { realm: "operator", role: "viewer" });
  const cookie = `console_operator=${await signInCookie(service.url, operator)}`;
  const page = await (await fetch(`${service.url}/console/admin/orders`, { headers: { cookie } })).text();
  assert.match(page, /Profile inventory/);
  assert.match(page, /CARRIER-FR-1GB-7D<\/td><td>FR_1GB<\/td>\s*<td class="num">50<\/td>/);
  assert.match(page, /status failed">low</);
  assert.match(page, /<h2>Refunds held<\/h2>/);
  const cli = await runCli(["profiles", "inventory", "--json"], {
    ...world.env,
    ...es2plusEnv,
    APP_ENV: "sandbox",
  });
  assert.equal(cli.code, 0, cli.stderr);
  const row = JSON.parse(cli.stdout).data.find(
    (r: { external_package_id: string }) => r.external_package_id === "CARRIER-FR-1GB-7D",
  );
  assert.deepEqual([row.free, row.low], [free_now.n, true]);
});

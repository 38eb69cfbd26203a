// The ES2+ adapter against the SM-DP+ simulator process over real mutual TLS (certificates made
// at test time): the order of calls, the recovery after each lost answer, the status mapping,
// cancellation for refunds, and the TLS door itself.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProvisionRequest } from "../src/carrier/carrier.ts";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { AMBIGUOUS_CANCEL, cancelProfileOrder } from "../src/carrier/es2plus/cancel-profile.ts";
import { composeCarrier } from "../src/carrier/es2plus/compose.ts";
import { Es2PlusCarrier } from "../src/carrier/es2plus/es2plus-carrier.ts";
import { Es2PlusClient } from "../src/carrier/es2plus/es2plus-client.ts";
import { importInventory } from "../src/carrier/es2plus/import-inventory.ts";
import { type Es2PlusDeps, orderProfile } from "../src/carrier/es2plus/order-profile.ts";
import { heldCancels } from "../src/carrier/es2plus/settle-cancel.ts";
import type { Config } from "../src/config.ts";
import { iccidRange } from "../src/lib/iccid-range.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSimulatorProcess } from "./support/simulator.ts";
import { REQUESTER_ID, SMDP_ADDRESS, smdpRequest, startSmdpProcess } from "./support/smdp.ts";
import { makeCertificates } from "./support/tls.ts";

const database = await createTestDatabase({ catalog: true });
const certs = makeCertificates();
const smdp = await startSmdpProcess({ databaseUrl: database.url, certs });
const bundleSim = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });

function client(identity = certs.client, requester_id = REQUESTER_ID): Es2PlusClient {
  const es2 = new Es2PlusClient({
    base_url: smdp.url,
    requester_id,
    cert: identity.cert,
    key: identity.key,
    ca: certs.ca,
    timeout_ms: 3_000,
  });
  return es2;
}
const deps: Es2PlusDeps = { pool: database.pool, client: client(), smdp_address: SMDP_ADDRESS };

const withCheckDigit = (payload: string) => `${payload}${luhnCheckDigit(payload)}`;

/** A fresh range of `count` ICCIDs, loaded at the SM-DP+ (unless told not to) and in our inventory. */
let next_block = 1;
async function stock(
  count: number,
  options: { at_smdp?: boolean; package_id?: string } = {},
): Promise<{ iccids: string[]; package_id: string }> {
  const iccids = iccidRange(withCheckDigit(`89445${String(next_block++).padStart(6, "0")}0000000`), count);
  const package_id = options.package_id ?? `PKG-${next_block}`;
  if (options.at_smdp !== false) await smdp.load(`TYPE-${next_block}`, iccids[0]!, count);
  await importInventory(database.pool, {
    external_package_id: package_id,
    profile_type: `TYPE-${next_block}`,
    first_iccid: iccids[0]!,
    count,
  });
  return { iccids, package_id };
}

/** Profiles over ES2+ and plans at the bundle simulator; `budget_ms`: one operation's, if not 6 calls' timeouts. */
function composedCarrier(budget_ms?: number): Es2PlusCarrier {
  const bundles = new HttpCarrier({ base_url: bundleSim.url, api_key: bundleSim.apiKey, timeout_ms: 3_000 });
  return new Es2PlusCarrier(deps, bundles, 3_000, budget_ms);
}

function provisionRequest(
  reference: string,
  external_package_id: string,
  end_user_email: string,
): ProvisionRequest {
  return {
    reference,
    external_package_id,
    data_mb: 1024,
    validity_days: 7,
    start_date: null,
    end_user_email,
  };
}

async function provisioned(reference: string, package_id: string) {
  const outcome = await orderProfile(deps, reference, package_id);
  assert.equal(outcome.kind, "ok", JSON.stringify(outcome));
  return outcome.kind === "ok" ? outcome.value : (null as never);
}

test("a profile order goes DownloadOrder -> ConfirmOrder (released) with our matching ID and the SM-DP+ address", async () => {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(2);
  const profile = await provisioned("ord_es2_happy", package_id);
  assert.equal(profile.iccid, iccid);
  assert.equal(profile.smdp_address, SMDP_ADDRESS);
  assert.match(profile.activation_code, /^[0-9A-Z]{5}(-[0-9A-Z]{5}){3}$/);
  const at_smdp = await smdp.profile(iccid!);
  assert.equal(at_smdp?.state, "RELEASED");
  assert.equal(at_smdp?.matching_id, profile.activation_code);
  // Asking again is answered from our intent: the same profile, no second call.
  assert.deepEqual(await provisioned("ord_es2_happy", package_id), profile);
  const transitions = (
    await database.pool.query("select function from smdp_sim.transitions where iccid = $1 order by id", [
      iccid,
    ])
  ).rows;
  assert.deepEqual(
    transitions.map((row) => row.function),
    ["downloadOrder", "confirmOrder"],
  );
});

test("a lost DownloadOrder answer (committed, then dropped) continues with ConfirmOrder for the same ICCID", async () => {
  const {
    iccids: [iccid, second],
    package_id,
  } = await stock(2);
  await smdp.control({ drop_share: 1, functions: ["downloadOrder"] });
  try {
    const lost = await orderProfile(deps, "ord_es2_lost_download", package_id);
    assert.equal(lost.kind, "unavailable");
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
  assert.equal((await smdp.profile(iccid!))?.state, "ALLOCATED", "the SM-DP+ did it");
  const profile = await provisioned("ord_es2_lost_download", package_id);
  assert.equal(profile.iccid, iccid, "the same ICCID, not a second profile");
  assert.equal((await smdp.profile(iccid!))?.state, "RELEASED");
  assert.equal((await smdp.profile(second!))?.state, "AVAILABLE");
});

test("a lost ConfirmOrder answer is recovered by ReleaseProfile's invalid transition: one profile, the same matching ID", async () => {
  const {
    iccids: [iccid, second],
    package_id,
  } = await stock(2);
  await smdp.control({ drop_share: 1, functions: ["confirmOrder"] });
  try {
    assert.equal((await orderProfile(deps, "ord_es2_lost_confirm", package_id)).kind, "unavailable");
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
  const at_smdp = await smdp.profile(iccid!);
  assert.equal(at_smdp?.state, "RELEASED", "the confirmation went through");
  const profile = await provisioned("ord_es2_lost_confirm", package_id);
  assert.equal(profile.activation_code, at_smdp?.matching_id);
  assert.equal((await smdp.profile(second!))?.state, "AVAILABLE");
});

test("a wrong X-Admin-Protocol or an HTTP 500 is an unknown outcome; asking again finishes the one profile", async () => {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(2);
  await smdp.control({ bad_header_share: 1, functions: [] });
  try {
    const answer = await orderProfile(deps, "ord_es2_bad_header", package_id);
    assert.equal(answer.kind, "unavailable");
    assert.match(answer.kind === "unavailable" ? answer.reason : "", /X-Admin-Protocol/);
  } finally {
    await smdp.control({ bad_header_share: 0 });
  }
  await smdp.control({ fail_share: 1 });
  try {
    assert.equal((await orderProfile(deps, "ord_es2_bad_header", package_id)).kind, "unavailable");
  } finally {
    await smdp.control({ fail_share: 0 });
  }
  assert.equal((await provisioned("ord_es2_bad_header", package_id)).iccid, iccid);
});

/** An order whose ConfirmOrder the SM-DP+ refuses (8.2.6/3.3: another profile holds our matching ID). */
async function confirmRefusedSetUp(reference: string) {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(1);
  // The intent first (DownloadOrder answered 500, nothing done), to learn the matching ID we chose.
  await smdp.control({ fail_share: 1, functions: ["downloadOrder"] });
  try {
    assert.equal((await orderProfile(deps, reference, package_id)).kind, "unavailable");
  } finally {
    await smdp.control({ fail_share: 0, functions: [] });
  }
  const {
    rows: [intent],
  } = await database.pool.query("select matching_id from es2plus_profile_orders where reference = $1", [
    reference,
  ]);
  const {
    iccids: [holder],
  } = await stock(1);
  await database.pool.query("update smdp_sim.profiles set matching_id = $1 where iccid = $2", [
    intent.matching_id,
    holder,
  ]);
  return { iccid: iccid!, package_id, holder: holder!, matching_id: intent.matching_id as string };
}

test("a refused ConfirmOrder takes the allocated profile back (CancelOrder without the matching ID it never got) and is final", async () => {
  const { iccid, package_id } = await confirmRefusedSetUp("ord_es2_confirm_refused");
  const refused = await orderProfile(deps, "ord_es2_confirm_refused", package_id);
  assert.equal(refused.kind, "refused", JSON.stringify(refused));
  assert.match(refused.kind === "refused" ? refused.reason : "", /8\.2\.6\/3\.3/);
  assert.equal((await smdp.profile(iccid))?.state, "UNAVAILABLE");
});

test("a refused ConfirmOrder whose CancelOrder answer was lost stays refused: the cancelled profile is never released", async () => {
  const { iccid, package_id, holder, matching_id } = await confirmRefusedSetUp("ord_es2_withdraw_lost");
  // CancelOrder is done and committed, its answer lost. (The allocated profile is given our matching
  // ID at the simulator so the first CancelOrder, which names it, is the one done.)
  await smdp.control({ fail_share: 1, functions: ["cancelOrder"] });
  try {
    const pending = await orderProfile(deps, "ord_es2_withdraw_lost", package_id);
    assert.match(
      pending.kind === "unavailable" ? pending.reason : "",
      /8\.2\.6\/3\.3.*CancelOrder not confirmed/,
    );
  } finally {
    await smdp.control({ fail_share: 0, functions: [] });
  }
  await database.pool.query("update smdp_sim.profiles set matching_id = null where iccid = $1", [holder]);
  await database.pool.query("update smdp_sim.profiles set matching_id = $1 where iccid = $2", [
    matching_id,
    iccid,
  ]);
  await smdp.control({ drop_share: 1, functions: ["cancelOrder"] });
  try {
    assert.equal((await orderProfile(deps, "ord_es2_withdraw_lost", package_id)).kind, "unavailable");
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
  assert.equal((await smdp.profile(iccid))?.state, "UNAVAILABLE", "the SM-DP+ cancelled it");
  // Asked again (a retry, the resolver): the refusal is finished, not a cancelled profile sold.
  const again = await orderProfile(deps, "ord_es2_withdraw_lost", package_id);
  assert.equal(again.kind, "refused", JSON.stringify(again));
  assert.match(again.kind === "refused" ? again.reason : "", /8\.2\.6\/3\.3/);
  assert.equal((await smdp.profile(iccid))?.state, "UNAVAILABLE");
});

test("an ICCID the SM-DP+ does not know is a definite refusal (8.2.1/3.9), remembered for the reference", async () => {
  const { package_id } = await stock(1, { at_smdp: false });
  const refused = await orderProfile(deps, "ord_es2_unknown_iccid", package_id);
  assert.equal(refused.kind, "refused");
  assert.match(refused.kind === "refused" ? refused.reason : "", /8\.2\.1\/3\.9/);
  assert.deepEqual(await orderProfile(deps, "ord_es2_unknown_iccid", package_id), refused);
});

test("an empty inventory is a refusal before any call", async () => {
  const outcome = await orderProfile(deps, "ord_es2_no_stock", "NO-SUCH-PACKAGE");
  assert.equal(outcome.kind, "refused");
});

test("CancelOrder cancels a released profile back to the SM-DP+'s pool (idempotent) and is refused once the profile was downloaded", async () => {
  const {
    iccids: [iccid, other],
    package_id,
  } = await stock(2);
  await provisioned("ord_es2_cancel", package_id);
  assert.deepEqual(await cancelProfileOrder(deps, { reference: "ord_es2_cancel", iccid: iccid! }), {
    kind: "ok",
  });
  // Available (SGP.22 5.3.4): never downloaded, so not burnt; the matching ID we sold is dead.
  const returned = await smdp.profile(iccid!);
  assert.equal(returned?.state, "AVAILABLE");
  assert.equal(returned?.matching_id, null);
  assert.deepEqual(await cancelProfileOrder(deps, { reference: "ord_es2_cancel", iccid: iccid! }), {
    kind: "ok",
  });

  await provisioned("ord_es2_downloaded", package_id);
  assert.equal((await smdp.event(other!, "download")).status, 200);
  assert.deepEqual(await cancelProfileOrder(deps, { reference: "ord_es2_downloaded", iccid: other! }), {
    kind: "refused",
    reason: "esim_installed",
  });
  assert.equal((await smdp.profile(other!))?.state, "DOWNLOADED");
  // A later refund of the same order (the first was refused, the order stayed completed) hears the
  // same 3.5: still a refusal, not "our earlier CancelOrder went through" (no download
  // notification reached us here, as when the SM-DP+'s callbacks are lost or not configured).
  assert.deepEqual(await cancelProfileOrder(deps, { reference: "ord_es2_downloaded", iccid: other! }), {
    kind: "refused",
    reason: "esim_installed",
  });
});

/** What the SM-DP+'s HandleDownloadProgressInfo receiver (receive-download-progress.ts) stores. */
async function downloadNotified(iccid: string): Promise<void> {
  await database.pool.query(
    `insert into smdp_notifications (iccid, notification_point_id, status, occurred_at)
     values ($1, 3, 'Executed-Success', now())`,
    [iccid],
  );
}

async function cancelWithAnswerLost(reference: string, iccid: string) {
  await smdp.control({ drop_share: 1, functions: ["cancelOrder"] });
  try {
    const lost = await cancelProfileOrder(deps, { reference, iccid });
    assert.equal(lost.kind, "unavailable", JSON.stringify(lost));
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
}

test("downloaded, then our CancelOrder's 3.5 lost, then the repeat's 3.5 before any notification: held, never ok; the late notification refuses it", async () => {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(1);
  await provisioned("ord_es2_held_downloaded", package_id);
  // The traveller downloads it; the SM-DP+'s notification is late (none is delivered in this file).
  assert.equal((await smdp.event(iccid!, "download")).status, 200);
  await cancelWithAnswerLost("ord_es2_held_downloaded", iccid!);
  const request = { reference: "ord_es2_held_downloaded", iccid: iccid! };
  // ES2+ v2's 3.5 is "already cancelled" or "downloaded": read as ours, this credited the refund.
  const repeat = await cancelProfileOrder(deps, request);
  assert.deepEqual(repeat, { kind: "unavailable", reason: AMBIGUOUS_CANCEL });
  assert.deepEqual(await cancelProfileOrder(deps, request), repeat, "still held: silence never settles it");
  assert.deepEqual(
    (await heldCancels(database.pool, 1_000)).map((h) => h.reference).filter((r) => r === request.reference),
    [request.reference],
  );
  await downloadNotified(iccid!);
  assert.deepEqual(await cancelProfileOrder(deps, request), { kind: "refused", reason: "esim_installed" });
  assert.equal((await smdp.profile(iccid!))?.state, "DOWNLOADED");
  assert.equal(
    (await heldCancels(database.pool, 1_000)).some((h) => h.reference === request.reference),
    false,
  );
});

test("our CancelOrder done but its answer lost, the repeat's 3.5 is held; the operator's 'cancelled' settles it ok, a download notification outranks it", async () => {
  const {
    iccids: [iccid, other],
    package_id,
  } = await stock(2);
  await provisioned("ord_es2_held_cancelled", package_id);
  await cancelWithAnswerLost("ord_es2_held_cancelled", iccid!);
  assert.equal((await smdp.profile(iccid!))?.state, "AVAILABLE", "the SM-DP+ did cancel it");
  const request = { reference: "ord_es2_held_cancelled", iccid: iccid! };
  assert.deepEqual(await cancelProfileOrder(deps, request), {
    kind: "unavailable",
    reason: AMBIGUOUS_CANCEL,
  });
  const carrier = composedCarrier();
  assert.equal(
    await carrier.settleHeldCancel({ ...request, reference: "ord_es2_nothing" }, "cancelled"),
    "not_held",
  );
  assert.equal(await carrier.settleHeldCancel(request, "cancelled"), "settled");
  assert.deepEqual(await cancelProfileOrder(deps, request), { kind: "ok" });
  assert.equal(await carrier.settleHeldCancel(request, "cancelled"), "not_held", "settled once");

  // Held likewise, but the SM-DP+ reported a download meanwhile: "cancelled" is not recorded.
  await provisioned("ord_es2_held_contradicted", package_id);
  assert.equal((await smdp.event(other!, "download")).status, 200);
  const contradicted = { reference: "ord_es2_held_contradicted", iccid: other! };
  await cancelWithAnswerLost(contradicted.reference, other!);
  assert.equal((await cancelProfileOrder(deps, contradicted)).kind, "unavailable");
  await downloadNotified(other!);
  assert.equal(await carrier.settleHeldCancel(contradicted, "cancelled"), "downloaded");
  assert.deepEqual(await cancelProfileOrder(deps, contradicted), {
    kind: "refused",
    reason: "esim_installed",
  });
});

/** Another requester of the SM-DP+ takes a profile from its pool and releases it under its own code. */
async function reallocated(iccid: string, matching_id: string): Promise<void> {
  assert.equal((await deps.client.call("downloadOrder", { iccid })).kind, "executed");
  const confirmed = await deps.client.call("confirmOrder", {
    iccid,
    releaseFlag: true,
    matchingId: matching_id,
  });
  assert.equal(confirmed.kind, "executed");
}

test("our refund's CancelOrder returned the profile to the pool, answer lost, and the SM-DP+ gave it out anew: the repeat's 3.10 is our cancel done", async () => {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(1);
  await provisioned("ord_es2_cancel_reissued", package_id);
  await cancelWithAnswerLost("ord_es2_cancel_reissued", iccid!);
  await reallocated(iccid!, "OTHER-REQUESTER-00001");
  const request = { reference: "ord_es2_cancel_reissued", iccid: iccid! };
  assert.deepEqual(await cancelProfileOrder(deps, request), { kind: "ok" });
  assert.equal((await smdp.profile(iccid!))?.matching_id, "OTHER-REQUESTER-00001", "theirs, untouched");
});

test("a declined plan's released profile, withdrawn to the pool with its answer lost and given out anew: withdrawn, the new holder's order untouched", async () => {
  const {
    iccids: [iccid],
  } = await stock(1, { package_id: "PKG-DECLINE-REISSUED" });
  const carrier = composedCarrier();
  const declined = {
    ...provisionRequest("ord_es2_declined_reissued", "PKG-DECLINE-REISSUED", "decline@carrier.test"),
  };
  await smdp.control({ drop_share: 1, functions: ["cancelOrder"] });
  try {
    assert.equal((await carrier.provisionProfile(declined)).kind, "unavailable");
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
  assert.equal((await smdp.profile(iccid!))?.state, "AVAILABLE", "returned to the pool, not retired");
  await reallocated(iccid!, "OTHER-REQUESTER-00002");
  // A cancel without a matching ID (the ConfirmOrder-refused fallback) would take their order.
  assert.equal((await carrier.provisionProfile(declined)).kind, "refused");
  const theirs = await smdp.profile(iccid!);
  assert.deepEqual([theirs?.state, theirs?.matching_id], ["RELEASED", "OTHER-REQUESTER-00002"]);
});

for (const taken_as of ["RELEASED", "ALLOCATED"] as const) {
  test(`an ICCID another requester holds (${taken_as}) before our first DownloadOrder is not ours: refused, their order untouched`, async () => {
    for (const reason of ["3.3", "3.7"] as const) {
      await smdp.control({ download_taken_reason: reason });
      try {
        const {
          iccids: [iccid],
          package_id,
        } = await stock(1);
        // Another requester's order of the same ICCID (an inventory shared by mistake, imported twice).
        const theirs = `THEIRS-${taken_as.slice(0, 3)}-${reason.replace(".", "")}`;
        assert.equal((await deps.client.call("downloadOrder", { iccid })).kind, "executed");
        if (taken_as === "RELEASED") {
          const confirmed = await deps.client.call("confirmOrder", {
            iccid,
            releaseFlag: true,
            matchingId: theirs,
          });
          assert.equal(confirmed.kind, "executed");
        }
        const reference = `ord_es2_not_ours_${taken_as}_${reason}`;
        const outcome = await orderProfile(deps, reference, package_id);
        assert.equal(outcome.kind, "refused", `${reason}: ${JSON.stringify(outcome)}`);
        const at_smdp = await smdp.profile(iccid!);
        assert.equal(at_smdp?.state, taken_as, "their profile is left as it was");
        assert.equal(at_smdp?.matching_id ?? null, taken_as === "RELEASED" ? theirs : null);
        assert.equal((await orderProfile(deps, reference, package_id)).kind, "refused", "remembered");
      } finally {
        await smdp.control({ download_taken_reason: "3.3" });
      }
    }
  });
}

test("the composed carrier attaches the plan at the bundle system to the SM-DP+'s ICCID", async () => {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(1);
  const carrier = composedCarrier();
  const request = provisionRequest("ord_es2_composed", package_id, "someone@example.com");
  const outcome = await carrier.provisionProfile(request);
  assert.equal(outcome.kind, "ok");
  const at_bundles = await bundleSim.profile(iccid!);
  assert.equal(at_bundles?.reference, "ord_es2_composed");
  assert.equal(at_bundles?.activation_code, (await smdp.profile(iccid!))?.matching_id);
  // A bundle system's refusal cancels the released profile: nothing usable is left for nothing paid.
  const {
    iccids: [declined],
  } = await stock(1, { package_id: "PKG-DECLINE" });
  const declined_request = {
    ...request,
    reference: "ord_es2_declined",
    external_package_id: "PKG-DECLINE",
    end_user_email: "decline@carrier.test",
  };
  // The refusal is final only once the SM-DP+ confirms CancelOrder: a lost answer keeps it pending.
  await smdp.control({ fail_share: 1, functions: ["cancelOrder"] });
  try {
    assert.equal((await carrier.provisionProfile(declined_request)).kind, "unavailable");
  } finally {
    await smdp.control({ fail_share: 0, functions: [] });
  }
  assert.equal((await smdp.profile(declined!))?.state, "RELEASED");
  // Meanwhile an operator's look-up must not hear "refused" (settling it failed would leave the
  // released profile with no order and nobody to take it back).
  assert.equal((await carrier.lookUpOutcome("ord_es2_declined")).kind, "unavailable");
  const refused = await carrier.provisionProfile(declined_request);
  assert.equal(refused.kind, "refused");
  assert.equal((await smdp.profile(declined!))?.state, "AVAILABLE");
  assert.equal((await carrier.lookUpOutcome("ord_es2_declined")).kind, "refused");
  // Released at the SM-DP+ but no plan attached yet: an operator settling it must not hear "never provisioned".
  const { package_id: halfway } = await stock(1);
  await provisioned("ord_es2_halfway", halfway);
  assert.equal((await carrier.lookUpOutcome("ord_es2_halfway")).kind, "unavailable");
  assert.equal((await carrier.lookUpOutcome("ord_es2_never")).kind, "not_found");
});

test("a provisioning's calls share one budget: when it runs out the outcome is unknown, and asking again finishes the one profile", async () => {
  const {
    iccids: [iccid],
    package_id,
  } = await stock(1);
  // Each call alone (600 ms) is well inside its 3 s timeout; DownloadOrder then ConfirmOrder is not
  // inside a budget of 1 s (the real one is six timeouts, what the order's lease is sized to).
  const carrier = composedCarrier(1_000);
  const request = provisionRequest("ord_es2_budget", package_id, "budget@example.com");
  await smdp.control({ latency_ms: 600 });
  let slow: Awaited<ReturnType<typeof carrier.provisionProfile>>;
  try {
    slow = await carrier.provisionProfile(request);
  } finally {
    await smdp.control({ latency_ms: 0 });
  }
  assert.equal(slow.kind, "unavailable", JSON.stringify(slow));
  assert.match(slow.kind === "unavailable" ? slow.reason : "", /operation's time/);
  const again = await carrier.provisionProfile(request);
  assert.equal(again.kind, "ok", JSON.stringify(again));
  assert.equal(again.kind === "ok" ? again.value.iccid : null, iccid);
  assert.equal((await smdp.profile(iccid!))?.state, "RELEASED");
  assert.equal((await bundleSim.profile(iccid!))?.reference, "ord_es2_budget");
});

test("the SM-DP+ refuses a client certificate from another CA, and a call without one", async () => {
  const stranger = client(certs.stranger);
  const answer = await stranger.call("downloadOrder", { profileType: "TYPE-1" });
  assert.equal(answer.kind, "unknown");
  stranger.close();
  await assert.rejects(smdpRequest(smdp.url, certs, "GET", "/healthz", undefined, null));
  await assert.rejects(smdpRequest(smdp.url, certs, "GET", "/healthz", undefined, certs.stranger));
});

test("the SM-DP+ simulator answers the SGP.22 status codes: requester, missing field, transitions, exhausted type", async () => {
  const {
    iccids: [iccid],
  } = await stock(1);
  const wrong = client(certs.client, "someone-else");
  const unknown = await wrong.call("downloadOrder", { iccid });
  assert.equal(unknown.kind, "failed");
  assert.deepEqual(unknown.kind === "failed" && unknown.status.statusCodeData?.subjectCode, "1.1");
  assert.equal(unknown.kind === "failed" && unknown.retryable, true);
  wrong.close();
  const es2 = deps.client;
  const missing = await es2.call("confirmOrder", { iccid });
  assert.equal(
    missing.kind === "failed" &&
      `${missing.status.statusCodeData?.subjectCode}/${missing.status.statusCodeData?.reasonCode}`,
    "1.6/2.2",
  );
  const early = await es2.call("confirmOrder", { iccid, releaseFlag: true });
  assert.equal(
    early.kind === "failed" && early.status.statusCodeData?.reasonCode,
    "3.5",
    "AVAILABLE cannot be confirmed",
  );
  const profile_type = (await smdp.profile(iccid!))!.profile_type;
  assert.equal((await es2.call("downloadOrder", { profileType: profile_type })).kind, "executed");
  const exhausted = await es2.call("downloadOrder", { profileType: profile_type });
  assert.equal(
    exhausted.kind === "failed" &&
      `${exhausted.status.statusCodeData?.subjectCode}/${exhausted.status.statusCodeData?.reasonCode}`,
    "8.2.5/3.7",
  );
  assert.equal(exhausted.kind === "failed" && exhausted.retryable, false);
  const padded = await es2.call("releaseProfile", { iccid: `${iccid}F` });
  assert.equal(
    padded.kind === "failed" && padded.status.statusCodeData?.reasonCode,
    "3.5",
    "a trailing F names the same ICCID",
  );
});

test("a steadily slow SM-DP+ whose every call answers well inside CARRIER_TIMEOUT_MS still gets the order its one profile on a later attempt", async () => {
  // Review (review4): the carrier as the service composes it (compose.ts): each ES2+ call bounded by
  // CARRIER_TIMEOUT_MS, and the whole operation by the same CARRIER_TIMEOUT_MS. A retry records no
  // progress between calls, so it walks DownloadOrder (3.3), ConfirmOrder (3.5) and ReleaseProfile
  // again: with a steady latency above a third of the timeout no attempt can ever finish, and the
  // order stays pending (and its money held) until an operator steps in.
  const {
    iccids: [iccid],
    package_id,
  } = await stock(1);
  const timeout_ms = 1_000;
  const bundles = new HttpCarrier({ base_url: bundleSim.url, api_key: bundleSim.apiKey, timeout_ms });
  const config = {
    carrier_profiles: "es2plus",
    carrier_timeout_ms: timeout_ms,
    es2plus: {
      url: smdp.url,
      requester_id: REQUESTER_ID,
      client_cert_file: certs.client.cert_file,
      client_key_file: certs.client.key_file,
      ca_file: certs.ca_file,
      smdp_address: SMDP_ADDRESS,
    },
  } as unknown as Config;
  const carrier = composeCarrier(config, database.pool, bundles);
  const request = provisionRequest("ord_es2_steady_slow", package_id, "steady@example.com");
  await smdp.control({ latency_ms: 550 });
  const outcomes: string[] = [];
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      const outcome = await carrier.provisionProfile(request);
      outcomes.push(outcome.kind === "ok" ? "ok" : `${outcome.kind}: ${outcome.reason}`);
      if (outcome.kind === "ok") break;
      // What the resolver does between attempts: the SM-DP+ finishes any call still in its hands.
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
  } finally {
    await smdp.control({ latency_ms: 0 });
  }
  assert.equal(
    outcomes.at(-1),
    "ok",
    `five attempts, each call 550 ms of a 1000 ms timeout:\n${outcomes.join("\n")}`,
  );
  assert.equal((await smdp.profile(iccid!))?.state, "RELEASED");
});

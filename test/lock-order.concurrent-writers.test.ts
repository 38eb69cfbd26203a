// Every writer of one eSIM's rows at once (issue #30, finding 4): top-ups, the eSIM's refund, a
// purchase (the same wallet) and a stream of carrier signals, over real HTTP against a real service
// and the carrier simulator. Whatever order PostgreSQL schedules them in, the global lock order
// (docs/architecture.md "Lock order") leaves it no cycle to break: no partner (nor the carrier) ever
// sees a 500, every order ends final once, and the audit of the books passes afterwards.
import assert from "node:assert/strict";
import { test } from "node:test";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { topUpBody } from "./support/fixtures.ts";
import type { EsimSignal } from "./support/simulator.ts";
import { type Answer, buyEsim, call, createWorld, newCart, submit, waitFor } from "./support/world.ts";

const CALLBACK_TOKEN = "callback-token-0123456789abcdef";
// The carrier's own pushes stay off (the simulator is not pointed at the service): the test sends
// its signals itself. The resolver and the refund sweep run as usual, writers too. A carrier call
// may take its time on a busy machine: the timeout is long, so no top-up is 503 for that.
const world = await createWorld({
  env: { CARRIER_CALLBACK_TOKEN: CALLBACK_TOKEN, CARRIER_TIMEOUT_MS: "10000", RESOLVE_AFTER_MS: "15000" },
});
const api = world.services[0]!.url;
const carrier = new HttpCarrier({
  base_url: world.simulator.url,
  api_key: world.simulator.apiKey,
  timeout_ms: 5_000,
});
const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };
const ROUNDS = 4;
const TOPUPS = 6;
const SIGNALS = 12;

type Seen = { what: string; status: number; code: unknown };

/** The carrier's current snapshot of the eSIM (a pull changes nothing), to re-send with later as_of times. */
async function snapshot(iccid: string): Promise<EsimSignal> {
  const state = await carrier.esimState(iccid);
  assert.equal(state.kind, "ok", JSON.stringify(state));
  return (state as { value: EsimSignal }).value;
}

/** The same snapshot, fresher each time: each one moves the eSIM's usage_updated_at, so each writes its row. */
async function signals(base: EsimSignal, seen: Seen[]): Promise<void> {
  for (let i = 1; i <= SIGNALS; i++) {
    const as_of = new Date(Date.parse(base.as_of) + i * 1_000).toISOString();
    const answer = await call(api, "POST", "/carrier/callbacks", {
      body: { ...base, as_of },
      headers: { authorization: `Bearer ${CALLBACK_TOKEN}` },
    });
    seen.push({ what: "signal", status: answer.status, code: answer.body?.code });
  }
}

function note(seen: Seen[], what: string) {
  return (answer: Answer): Answer => {
    seen.push({ what, status: answer.status, code: answer.body?.code });
    return answer;
  };
}

async function round(seen: Seen[]): Promise<{ api_key: string; order_id: string }> {
  const { partner, order_id, iccid } = await buyEsim(api, 1_000_00);
  const base = await snapshot(iccid);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const writers: Promise<unknown>[] = [signals(base, seen)];
  for (let i = 0; i < TOPUPS; i++) {
    const body = topUpBody(iccid, TOPUP);
    writers.push(
      call(api, "POST", "/v1/orders/submit-topup", { key: partner.api_key, body }).then(note(seen, "topup")),
    );
  }
  writers.push(
    call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key }).then(note(seen, "refund")),
  );
  writers.push(submit(api, partner.api_key, cart.cart_key).then(note(seen, "purchase")));
  writers.push(signals(base, seen));
  await Promise.all(writers);
  return { api_key: partner.api_key, order_id };
}

/** The refund asked for in the round, driven to its end by the partner's retries. */
async function refundEnds(round: { api_key: string; order_id: string }, seen: Seen[]): Promise<Answer> {
  return waitFor("the refund's end", async () => {
    const answer = note(
      seen,
      "refund retry",
    )(await call(api, "POST", `/v1/orders/${round.order_id}/refund`, { key: round.api_key }));
    return answer.status === 409 && answer.body.code === "request_in_progress" ? null : answer;
  });
}

test(`top-ups, a refund, a purchase and carrier signals on one eSIM at once: never a 500, the books audit clean (${ROUNDS} rounds)`, async () => {
  const seen: Seen[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const done = await round(seen);
    const refund = await refundEnds(done, seen);
    // Refunded, or refused because a top-up that completed meanwhile is ... never: a queued top-up
    // leaves the eSIM released, so the refund is always allowed and must end refunded.
    assert.equal(refund.status, 200, JSON.stringify(refund.body));
    assert.equal(refund.body.status, "refunded");
  }
  // A 502 carrier_error is the carrier's truthful refusal of a top-up that raced the cancel of its
  // profile (nothing charged); any other 5xx is ours.
  const ours = seen.filter((s) => s.status >= 500 && !(s.what === "topup" && s.code === "carrier_error"));
  const logged = world.services[0]!.logs()
    .split("\n")
    .filter((line) => line.includes('"level":50'));
  assert.deepEqual(ours, [], `${ours.length} server errors, logged first:\n${logged.slice(0, 3).join("\n")}`);
  const audit = await waitFor("every order final", async () => {
    const result = await auditSystem({ pool: world.database.pool, simulator: world.simulator });
    return result.figures.pending === 0 ? result : null;
  });
  const breaches = audit.breaches.filter((breach) => !breach.startsWith("[one-email-per-new-esim]"));
  assert.deepEqual(breaches, [], formatAudit(audit));
  assert.equal(audit.figures.refunded >= ROUNDS, true, formatAudit(audit));
});

// The chaos client's refunds: a completed purchase or top-up of the stream, refunded (sometimes under
// an Idempotency-Key, sometimes twice at once) until a final answer: 200 refunded or 409
// refund_not_allowed; 409 request_in_progress, 503 and transport failures are retried. What it was
// told is checked against the books after the drain (verify.ts): a refunded order is `refunded` and
// credited its total once (the audit), a refused one stays `completed`.
import type { Answer } from "../http.ts";
import type { Rng } from "../rng.ts";
import { retryAfterMs, type Sent, send } from "./client.ts";
import { OPERATION_DEADLINE_MS } from "./options.ts";
import { type Operation, type RefundFinal, type Run, sleep } from "./state.ts";

/**
 * Refunds one completed operation nobody refunded yet; false when there is none. Never an Airalo
 * order's: Airalo reviews a refund request by hand, later (README "Suppliers"), and refunds no
 * top-up on its own, so the partner's refund stays under way past any client's deadline; the
 * stream keeps to refunds that can finish (the carrier's, and eSIM Go's revoke of an unused bundle).
 * Nor an eSIM Go eSIM that a top-up was tried on: refunding the eSIM credits its top-ups too
 * (src/refunds/finish-refund.ts: the carrier's cancel takes every bundle on the profile), but eSIM
 * Go's revoke takes the eSIM's own bundle only, so the top-ups would be credited and never refunded
 * at eSIM Go (a known gap, found by this audit; see CHANGELOG). Nor an eSIM Go top-up: the revoke
 * names a bundle, not an assignment, and eSIM Go revokes the eSIM's oldest unused one of that name,
 * which may be the eSIM's own purchase (src/carrier/esimgo/refund.ts names this residual risk; the
 * audit saw it: the top-up refunded here, the eSIM's bundle revoked there).
 */
export async function refund(run: Run, rng: Rng, op: number): Promise<boolean> {
  const candidates = run.operations.filter(
    (o) =>
      o.final === "completed" &&
      o.refund === "none" &&
      o.supplier !== "airalo" &&
      !(o.supplier === "esimgo" && o.kind === "topup") &&
      !(o.supplier === "esimgo" && o.kind === "purchase" && run.topped_up_iccids.has(o.iccid ?? "")),
  );
  if (candidates.length === 0) return false;
  const operation: Operation = rng.pick(candidates);
  const order_id = [...operation.order_ids][0];
  if (order_id === undefined) return false;
  operation.refund = "requested";
  // No top-up starts on an eSIM Go eSIM whose refund was asked (see above); the carrier's race on.
  if (operation.supplier === "esimgo" && operation.kind === "purchase" && operation.iccid !== null)
    run.refunded_iccids.add(operation.iccid);
  const headers: Record<string, string> = rng.chance(0.5) ? { "idempotency-key": `chaos-refund-${op}` } : {};
  const final = await refundUntilFinal(run, rng, operation, order_id, headers, rng.chance(0.2));
  operation.refund = final;
  // A group order is never refunded through the API (409 refund_not_allowed, reason group_order).
  if (operation.quantity > 1 && final === "refunded")
    run.breach(`refund op ${op} of group order ${order_id}: refunded, a group order never is`);
  run.count(run.stats.outcomes, `refund ${final}`);
  run.count(run.stats.suppliers, `${operation.supplier} refund ${final}`);
  if (final !== "unresolved" && rng.chance(0.2)) {
    // Asked again: a refunded order answers 200 again (no second credit), a refusal stays a refusal.
    run.stats.replays_checked += 1;
    const again = await refundUntilFinal(run, rng, operation, order_id, headers, false);
    if (again !== final && again !== "unresolved") {
      run.breach(`refund op ${op} of ${order_id}: answered ${final} first, ${again} when asked again`);
    }
  }
  return true;
}

/** Sends the refund until a final answer or the deadline; `race`: the first attempt goes twice at once. */
export async function refundUntilFinal(
  run: Run,
  rng: Rng,
  operation: Operation,
  order_id: string,
  headers: Record<string, string>,
  race: boolean,
): Promise<RefundFinal> {
  const path = `/v1/orders/${order_id}/refund`;
  const deadline = Date.now() + OPERATION_DEADLINE_MS;
  let avoid: string | null = null;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    if (attempt > 0) run.stats.retries += 1;
    const call = (to: string | null) =>
      send(run, rng, "POST", path, {
        key: operation.partner.api_key,
        headers,
        timeout_ms: 15_000,
        avoid: to,
      });
    let sent: Sent;
    if (race && attempt === 0) {
      const [first, second] = await Promise.all([call(null), call(null)]);
      if (second.answer) observeRefund(run, order_id, second.answer);
      sent = first;
    } else {
      sent = await call(avoid);
    }
    if (!sent.answer) {
      avoid = sent.url;
      await sleep(rng.int(50, 300));
      continue;
    }
    const final = observeRefund(run, order_id, sent.answer);
    if (final) return final;
    await sleep(sent.answer.status === 409 ? retryAfterMs(sent.answer, rng) : rng.int(200, 600));
  }
  return "unresolved";
}

/** What one answer says about a refund: its final outcome, or null to retry. */
export function observeRefund(run: Run, order_id: string, answer: Answer): RefundFinal | null {
  const what = `refund of ${order_id}`;
  if (answer.status === 200) {
    if (answer.body.status !== "refunded" || answer.body.orderID !== order_id) {
      run.breach(`${what}: 200 with order ${answer.body.orderID} ${answer.body.status}`);
    }
    return "refunded";
  }
  if (answer.status === 409 && answer.body.code === "refund_not_allowed") return "refused";
  if (answer.status === 409 && answer.body.code === "request_in_progress") return null;
  if (answer.status === 503 && answer.body.code === "carrier_unavailable") return null;
  // The database was busy or restarting: nothing was decided that the retry would not find.
  if (answer.status === 503 && answer.body.code === "service_unavailable") return null;
  run.breach(`${what}: answered ${answer.status} ${answer.body?.code ?? ""}: ${answer.body?.detail ?? ""}`);
  return null;
}

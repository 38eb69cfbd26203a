// Refunds through eSIM Go: DELETE /esims/{iccid}/bundles/{name} revokes a bundle and, for an
// unstarted, unused assignment inside the refund period ("typically 60 days") on an account whose
// refunds are enabled ("disabled by default"), credits its price back to the balance; otherwise it
// only revokes (docs/suppliers/esimgo.md §5, [DOC:api/v2_4/operations/esimsiccidbundlesname/delete/]).
// A revoke without refund would take the bundle from the traveller and give nobody money back, so
// we never send one:
//   1. our order's assignment must be unused (GET /esims/{iccid}/bundles): else refused, bundle_used;
//   2. `type=validate` says what the revoke would do: not "refundable" -> refused (refunds disabled
//      on the account, or outside the refund period: eSIM Go does not say which);
//   3. `type=transaction&refundToBalance=true` (the parameter's name is UNCONFIRMED, §5):
//      "refunded" -> ok; "revoked" (the bundle started between 2 and 3) -> refused, recorded.
// Exactly once: refund_requested_at is written before the transaction; a later call whose answer
// was lost sees our assignment revoked and answers ok. The revoke names a bundle, not an
// assignment: of two unused assignments of one bundle on one eSIM eSIM Go revokes the oldest,
// which may be the other order's (the same bundle, the same price).
import type pg from "pg";
import type { CancelOutcome, CancelRequest } from "../carrier.ts";
import { type EsimGoClient, isObject, reasonOf } from "./client.ts";
import { type IntentRow, markRefundRequested, recordRefund, selectIntent } from "./esimgo.sql.ts";
import { type Assignment, parseAssignments } from "./shapes.ts";

export type RefundDeps = { pool: pg.Pool; client: EsimGoClient };

/** The revoke's "refund to organisation balance" parameter (UNCONFIRMED name, §5; the fake's). */
export const REFUND_PARAM = "refundToBalance";

export async function revokeWithRefund(deps: RefundDeps, request: CancelRequest): Promise<CancelOutcome> {
  const intent = await selectIntent(deps.pool, request.reference);
  if (intent === null || intent.order_reference === null) {
    return { kind: "refused", reason: `no eSIM Go order of ours for ${request.reference}` };
  }
  if (intent.iccid !== request.iccid) {
    return {
      kind: "refused",
      reason: `order ${request.reference} is on ${intent.iccid}, not ${request.iccid}`,
    };
  }
  if (intent.refunded_at !== null) return { kind: "ok" };
  if (intent.refund_refusal !== null) return { kind: "refused", reason: intent.refund_refusal };
  const path = `/esims/${encodeURIComponent(request.iccid)}/bundles/${encodeURIComponent(intent.item)}`;
  const listed = await deps.client.call(`/esims/${encodeURIComponent(request.iccid)}/bundles`, {
    query: { includeUsed: "true", limit: "200" },
  });
  if (listed.kind !== "ok") return { kind: "unavailable", reason: reasonOf(listed) };
  const assignments = parseAssignments(listed.body);
  if (assignments === null) return { kind: "unavailable", reason: "eSIM Go answered malformed bundles" };
  const ours = assignmentOf(assignments, intent);
  if (intent.refund_requested_at !== null && ours?.state === "revoked") {
    await recordRefund(deps.pool, intent.reference, { refunded: true });
    return { kind: "ok" };
  }
  if (ours === undefined || !isUnused(ours)) {
    return { kind: "refused", reason: "bundle_used" };
  }
  const validation = await deps.client.call(path, { method: "DELETE", query: { type: "validate" } });
  if (validation.kind === "rejected") return { kind: "refused", reason: `eSIM Go: ${validation.message}` };
  if (validation.kind !== "ok") return { kind: "unavailable", reason: reasonOf(validation) };
  if (statusOf(validation.body) !== "refundable") {
    return {
      kind: "refused",
      reason:
        "refunds_disabled: eSIM Go would revoke this bundle without a refund (refunds are off on the account, or the refund period is over)",
    };
  }
  await markRefundRequested(deps.pool, intent.reference);
  const verdict = await deps.client.call(path, {
    method: "DELETE",
    query: { type: "transaction", [REFUND_PARAM]: "true" },
  });
  if (verdict.kind === "rejected") return { kind: "refused", reason: `eSIM Go: ${verdict.message}` };
  if (verdict.kind !== "ok")
    return { kind: "unavailable", reason: `${reasonOf(verdict)}; the bundle is looked at again next time` };
  if (statusOf(verdict.body) === "refunded") {
    await recordRefund(deps.pool, intent.reference, { refunded: true });
    return { kind: "ok" };
  }
  const refusal = `eSIM Go revoked the bundle without a refund (status "${statusOf(verdict.body)}")`;
  await recordRefund(deps.pool, intent.reference, { refusal });
  return { kind: "refused", reason: refusal };
}

/** Our order's assignment: its reference starts with the order reference (UNCONFIRMED), else by name. */
function assignmentOf(assignments: Assignment[], intent: IntentRow): Assignment | undefined {
  const named = assignments.filter((one) => one.name === intent.item);
  return (
    named.find((one) => one.reference.startsWith(`${intent.order_reference}-`)) ??
    named.find(isUnused) ??
    named.at(-1)
  );
}

function isUnused(one: Assignment): boolean {
  return (one.state === "queued" || one.state === "processing") && one.remaining_bytes >= one.initial_bytes;
}

function statusOf(body: unknown): string {
  return isObject(body) && typeof body.status === "string" ? body.status.toLowerCase() : "";
}

// Operator use case: POST /admin/orders/{orderID}/settle and the operator console's settle form
// (issue 32). The operator's word for a pending order whose carrier cannot answer, known out of
// band (a ticket with the carrier, a call): `failed` voids the hold at once, `completed` posts it.
// Unlike the CLI's `orders settle` (settle-pending-order.ts), `failed` is taken before the give-up
// age and while the carrier is unreachable: the operator knows what the service cannot.
//
// The carrier is still asked first, by reference, with a look-up that provisions nothing, and its
// record wins where it has one: a profile it made is completed on `completed`, and cancelled
// before the order fails on `failed` (refused to cancel, e.g. already installed: 409
// carrier_disagrees, nothing changed); a refusal it recorded is only `failed`. `completed` with no
// profile at the carrier cannot deliver an eSIM: 409 carrier_disagrees when the carrier says it
// made none, 503 carrier_unavailable while it cannot be asked.
//
// Exactly once: the lease like every driver (the resolver, a retry: 409 request_in_progress while
// one holds it), the final write under a row lock that checks the lease is still ours, guarded by
// `status = 'pending'`; the audit entry (`order.settled`, with the reason) in that transaction.
import type { Transaction } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { CancelOutcome, LookedUpOutcome } from "../carrier/carrier.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { complete, fail } from "./drive-order.ts";
import type { FinishByType, OrderFinish } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import { lockOwnLease, orderById, releaseLease } from "./orders.sql.ts";
import { type Settlement, SettlementRefused, takeLease } from "./settle-pending-order.ts";

/** A settle refused for now (busy, carrier unreachable) says when to try again, as every "later" answer does. */
const RETRY_AFTER_S = 5;
const LATER = { headers: { "retry-after": String(RETRY_AFTER_S) } };

/** failure_code of an order the operator settled as failed (the partner sees `failed`, its hold voided). */
export const SETTLED_BY_OPERATOR = "settled_by_operator";

export type OperatorSettlement = { outcome: Settlement; reason: string; actor: Actor };

type Recording =
  | { record: "completed"; value: Extract<LookedUpOutcome, { kind: "ok" }>["value"] }
  | { record: "failed"; detail: string; failure_code: string };

/** What the carrier's record allows of the operator's word (a cancel first, when it made something). */
async function decide(ctx: AppContext, order: OrderRow, wanted: Settlement): Promise<Recording> {
  const id = order.order_id;
  const carrier = await ctx.carrier.lookUpOutcome(id);
  if (wanted === "completed") {
    if (carrier.kind === "ok") return { record: "completed", value: carrier.value };
    if (carrier.kind === "unavailable") {
      throw new ApiError(
        "carrier_unavailable",
        `The carrier could not be asked about ${id} (${carrier.reason}): completing needs what it made. Nothing was changed.`,
        { ...LATER, order_id: id },
      );
    }
    const said = carrier.kind === "refused" ? `refused it (${carrier.reason})` : "has no record of it";
    throw new ApiError("carrier_disagrees", `The carrier ${said}: ${id} can only be settled as failed.`);
  }
  if (carrier.kind === "ok") {
    const cancelled = await cancelAtCarrier(ctx, order, carrier.value.iccid);
    if (cancelled.kind !== "ok") {
      throw new ApiError(
        "carrier_disagrees",
        `The carrier made ${id} and did not cancel it (${cancelled.reason}): settle it as completed, or try again. Nothing was changed.`,
      );
    }
    return {
      record: "failed",
      detail: "settled by the operator: cancelled at the carrier",
      failure_code: SETTLED_BY_OPERATOR,
    };
  }
  if (carrier.kind === "refused")
    return { record: "failed", detail: carrier.reason, failure_code: "carrier_error" };
  return { record: "failed", detail: "settled by the operator", failure_code: SETTLED_BY_OPERATOR };
}

function cancelAtCarrier(ctx: AppContext, order: OrderRow, iccid: string): Promise<CancelOutcome> {
  const request = { reference: order.order_id, iccid };
  return order.type === "esim" ? ctx.carrier.cancelProfile(request) : ctx.carrier.cancelBundle(request);
}

async function record(
  trx: Transaction<Database>,
  ctx: AppContext,
  order: OrderRow,
  recording: Recording,
  finish: OrderFinish,
): Promise<boolean> {
  if (recording.record === "completed") {
    return (
      (await complete(trx, order, recording.value, finish, ctx.config.usage_sync_min_interval_s)) !== null
    );
  }
  return (await fail(trx, order, recording.detail, finish, recording.failure_code)) !== null;
}

/** Settles the order as the operator says (and the carrier allows); returns the order as it now is. */
export async function settleByOperator(
  ctx: AppContext,
  order_id: string,
  settlement: OperatorSettlement,
  finishers: FinishByType,
): Promise<OrderRow> {
  const order = await leased(ctx, order_id);
  try {
    const recording = await decide(ctx, order, settlement.outcome);
    await ctx.db.transaction().execute(async (trx) => {
      if (!(await lockOwnLease(trx, order_id, order.lease_token))) {
        throw new ApiError(
          "request_in_progress",
          `Order ${order_id} was taken over meanwhile; try again.`,
          LATER,
        );
      }
      if (!(await record(trx, ctx, order, recording, finishers[order.type]))) {
        throw new ApiError("order_not_pending", `Order ${order_id} was finished meanwhile.`);
      }
      await recordAudit(trx, {
        actor: settlement.actor,
        action: "order.settled",
        partner_id: order.partner_id,
        target: { type: "order", id: order_id },
        details: { outcome: recording.record, asked: settlement.outcome, reason: settlement.reason },
      });
    });
  } finally {
    // A no-op once the order is final; after a refusal, the resolver may drive it again at once.
    await releaseLease(ctx.db, order_id, order.lease_token);
  }
  const settled = await orderById(ctx.db, order_id);
  if (!settled) throw new ApiError("internal_error", "the settled order is gone");
  return settled;
}

/** The order's lease, or the API's answer: 404, 409 order_not_pending, 409 request_in_progress. */
async function leased(ctx: AppContext, order_id: string): Promise<OrderRow> {
  try {
    return await takeLease(ctx, order_id);
  } catch (error) {
    if (!(error instanceof SettlementRefused)) throw error;
    if (error.code === "order_not_pending") throw new ApiError("order_not_pending", error.message);
    throw new ApiError("request_in_progress", error.message, LATER);
  }
}

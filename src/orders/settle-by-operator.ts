// Operator use case: POST /admin/orders/{orderID}/settle and the operator console's settle form
// (issue 32). The operator's word for a pending order whose carrier cannot answer, known out of
// band (a ticket with the carrier, a call): `failed` voids the hold at once, `completed` posts it.
// Unlike the CLI's `orders settle` (settle-pending-order.ts), `failed` is taken before the give-up
// age and while the carrier is unreachable: the operator knows what the service cannot.
//
// The carrier is still asked first, by reference, with a look-up that provisions nothing, and its
// record wins where it has one: a profile it made is completed on `completed`; a refusal it recorded
// is only `failed`. `completed` with no profile at the carrier cannot deliver an eSIM (a new eSIM's
// order needs the carrier's ICCID and activation code): 409 carrier_disagrees when the carrier says
// it made none, 503 carrier_unavailable while it cannot be asked.
//
// `failed` always voids the hold (the contract). What the carrier made is cancelled AFTER the
// failure is recorded: once the order is failed nobody (the resolver taking the order over once our
// lease, sized for one carrier call, ran out) can complete it, so a cancelled eSIM is never charged.
// A cancel the carrier refuses or cannot answer, and a failure without the carrier's word (it could
// not be asked, or had no record yet: a call of a dead process may still land), is owed a later
// look (check-failed-at-carrier.ts): recorded on the order, the audit entry says `carrier_cancel`.
import type { Transaction } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { CancelOutcome, LookedUpOutcome } from "../carrier/carrier.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { checkOneLine } from "../shared/schemas.ts";
import { oweCarrierCheck, settleCarrierCheck } from "./carrier-checks.sql.ts";
import { CARRIER_CHECK_AFTER_S } from "./check-failed-at-carrier.ts";
import type { FinishByType, OrderFinish } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import { lockOwnLease, orderById, releaseLease } from "./orders.sql.ts";
import { complete, fail } from "./record-outcome.ts";
import { type Settlement, SettlementRefused, takeLease } from "./settle-pending-order.ts";

/** A settle refused for now (busy, carrier unreachable) says when to try again, as every "later" answer does. */
const RETRY_AFTER_S = 5;
const LATER = { headers: { "retry-after": String(RETRY_AFTER_S) } };

/** failure_code of an order the operator settled as failed (the partner sees `failed`, its hold voided). */
export const SETTLED_BY_OPERATOR = "settled_by_operator";

export type OperatorSettlement = { outcome: Settlement; reason: string; actor: Actor };

type Recording =
  | { record: "completed"; value: Extract<LookedUpOutcome, { kind: "ok" }>["value"] }
  | { record: "failed"; detail: string; failure_code: string; made: string | null; owed: boolean };

/** What the carrier's record allows of the operator's word. */
function decide(order: OrderRow, carrier: LookedUpOutcome, wanted: Settlement): Recording {
  const id = order.order_id;
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
  if (carrier.kind === "refused") {
    return {
      record: "failed",
      detail: carrier.reason,
      failure_code: "carrier_error",
      made: null,
      owed: false,
    };
  }
  const made = carrier.kind === "ok" ? carrier.value.iccid : null;
  // Not refused: the carrier made it (cancelled next) or gave no word; either way a look is owed
  // until the cancel is confirmed.
  const detail = made ? "settled by the operator: cancelled at the carrier" : "settled by the operator";
  return { record: "failed", detail, failure_code: SETTLED_BY_OPERATOR, made, owed: true };
}

/** Cancels what the carrier made; the order is already failed, so nobody completes it meanwhile. */
async function cancelAtCarrier(ctx: AppContext, order: OrderRow, iccid: string): Promise<CancelOutcome> {
  const request = { reference: order.order_id, iccid, supplier: order.supplier };
  return order.type === "esim" ? ctx.carrier.cancelProfile(request) : ctx.carrier.cancelBundle(request);
}

/** The audit's word on the carrier: cancelled, the cancel still owed, or not needed. */
function carrierCancelOf(carrier: LookedUpOutcome): string | undefined {
  if (carrier.kind === "ok") return "requested";
  if (carrier.kind === "unavailable") return "unavailable";
  if (carrier.kind === "not_found") return "none_yet";
  return undefined;
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
  if ((await fail(trx, order, recording.detail, finish, recording.failure_code)) === null) return false;
  if (recording.owed) await oweCarrierCheck(trx, order.order_id, CARRIER_CHECK_AFTER_S);
  return true;
}

type SettlementRecord = {
  recording: Recording;
  audit: OperatorSettlement;
  carrier_cancel: string | undefined;
};

/** The outcome and its audit entry, in one transaction, while the lease is still ours. */
async function recordSettlement(
  ctx: AppContext,
  order: OrderRow,
  finish: OrderFinish,
  { recording, audit, carrier_cancel }: SettlementRecord,
): Promise<void> {
  const order_id = order.order_id;
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await lockOwnLease(trx, order_id, order.lease_token))) {
      throw new ApiError(
        "request_in_progress",
        `Order ${order_id} was taken over meanwhile; try again.`,
        LATER,
      );
    }
    if (!(await record(trx, ctx, order, recording, finish))) {
      throw new ApiError("order_not_pending", `Order ${order_id} was finished meanwhile.`);
    }
    await recordAudit(trx, {
      actor: audit.actor,
      action: "order.settled",
      partner_id: order.partner_id,
      target: { type: "order", id: order_id },
      details: {
        outcome: recording.record,
        asked: audit.outcome,
        reason: audit.reason,
        ...(carrier_cancel ? { carrier_cancel } : {}),
      },
    });
  });
}

/** Settles the order as the operator says (and the carrier allows); returns the order as it now is. */
export async function settleByOperator(
  ctx: AppContext,
  order_id: string,
  settlement: OperatorSettlement,
  finishers: FinishByType,
): Promise<OrderRow> {
  // Checked here, for the API and the console's form alike (trimmed, counted in code points).
  const reason = checkOneLine("reason", settlement.reason);
  const order = await leased(ctx, order_id);
  let recording: Recording;
  try {
    const carrier = await ctx.carrier.lookUpOutcome(order_id, order.supplier);
    recording = decide(order, carrier, settlement.outcome);
    await recordSettlement(ctx, order, finishers[order.type], {
      recording,
      audit: { ...settlement, reason },
      carrier_cancel: recording.record === "failed" ? carrierCancelOf(carrier) : undefined,
    });
  } finally {
    // A no-op once the order is final; after a refusal, the resolver may drive it again at once.
    await releaseLease(ctx.db, order_id, order.lease_token);
  }
  if (recording.record === "failed" && recording.made) await cancelMade(ctx, order, recording.made);
  const settled = await orderById(ctx.db, order_id);
  if (!settled) throw new ApiError("internal_error", "the settled order is gone");
  return settled;
}

/**
 * Cancels what the carrier made for the failed order: confirmed, nothing more is owed; refused (an
 * eSIM installed), the order is marked for the operator; no answer, the owed look does it later.
 */
async function cancelMade(ctx: AppContext, order: OrderRow, iccid: string): Promise<void> {
  const cancelled = await cancelAtCarrier(ctx, order, iccid);
  if (cancelled.kind === "ok") await settleCarrierCheck(ctx.db, order.order_id, "cancelled");
  else if (cancelled.kind === "refused") await settleCarrierCheck(ctx.db, order.order_id, "refused");
}

/** The order's lease, or the API's answer: 404, 409 order_not_pending, 409 request_in_progress. */
async function leased(ctx: AppContext, order_id: string): Promise<OrderRow> {
  try {
    return await takeLease(ctx, order_id);
  } catch (error) {
    if (!(error instanceof SettlementRefused)) throw error;
    if (error.code === "order_not_pending") throw new ApiError("order_not_pending", error.message);
    if (error.code === "group_order") throw new ApiError("group_order_not_settled", error.message);
    throw new ApiError("request_in_progress", error.message, LATER);
  }
}

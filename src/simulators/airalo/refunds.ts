// POST /v2/refund [SPEC request-refund], [DOC:request-refund-14583565e0]: a refund *request*,
// answered 202 with a refund_id; "every request is manually reviewed" and an approval is credited
// as Airalo credit. Nothing is revoked by the call. No endpoint reads a request's outcome
// (UNCONFIRMED, none found): an approval shows as the orders' status `refunded` or
// `partially_refunded` (inferred from the order statuses) and as credit; the fake's review is a
// test's decision, made through POST /control/refunds/{id}/review.
import { inTransaction } from "../../db/pool.ts";
import {
  addCredit,
  insertRefund,
  markRefundReviewed,
  type RefundRow,
  refundSims,
  selectOrder,
  selectRefund,
  selectSimsByIccids,
  setOrderStatus,
} from "./airalo.sql.ts";
import { type Answer, airaloTime, invalid, ok, refused } from "./answers.ts";
import type { Fields } from "./bodies.ts";
import type { Context } from "./context.ts";

export const REFUND_REASONS = [
  "INSTALLATION_FAILURE",
  "NO_COVERAGE",
  "APN_FAILURE",
  "TRIP_CANCELLATION",
  "INTERMITTENT_CONNECTION",
  "BLOCKED_NETWORK",
  "CHANGE_OF_PLAN",
  "DELETED_ESIM",
  "EARLY_EXPIRY",
  "HOTSPOT_NOT_WORKING",
  "IMSI_CHANGE",
  "INCOMPATIBLE_DEVICE",
  "LOCKED_DEVICE",
  "NO_VOICE_TEXT_SERVICES",
  "OVERCHARGED",
  "SLOW_SPEED",
  "TOP_UP_PACKAGE_FAILURE",
  "UNKNOWN_CHARGES",
  "WRONG_PURCHASE",
  "UNABLE_TO_ACCESS_APPS",
  "SERVICE_DEGRADATION",
  "QR_ISSUE_PARTNERS",
  "OTHERS",
];

const MAX_ICCIDS = 5;

type RefundRequest = { iccids: string[]; reason: string; notes: string | null; email: string | null };

function validateRefund(fields: Fields): Answer | RefundRequest {
  const raw = fields.iccids;
  const iccids = (Array.isArray(raw) ? raw : typeof raw === "string" && raw !== "" ? [raw] : []).map(String);
  // The documented wording for a missing list is the {data: [], meta} shape, not the field map.
  if (iccids.length === 0) return refused("The iccids field is required.");
  const errors: Record<string, string> = {};
  if (iccids.length > MAX_ICCIDS) errors.iccids = `The iccids may not have more than ${MAX_ICCIDS} items.`;
  const reason = typeof fields.reason === "string" ? fields.reason : "";
  if (!REFUND_REASONS.includes(reason))
    errors.reason = `The selected reason is invalid. It must be one of the following: ${REFUND_REASONS.join(", ")}`;
  const notes = typeof fields.notes === "string" && fields.notes !== "" ? fields.notes : null;
  if (reason === "OTHERS" && notes === null)
    errors.notes = "The notes field is required when reason is OTHERS.";
  if (notes !== null && notes.length > 255)
    errors.notes = "The notes may not be greater than 255 characters.";
  const email = typeof fields.email === "string" && fields.email !== "" ? fields.email : null;
  if (email !== null && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    errors.email = "The email must be a valid email address.";
  if (Object.keys(errors).length > 0) return invalid(errors);
  return { iccids, reason, notes, email };
}

export async function requestRefund(context: Context, fields: Fields): Promise<Answer> {
  const request = validateRefund(fields);
  if ("status" in request) return request;
  const known = new Set((await selectSimsByIccids(context.pool, request.iccids)).map((sim) => sim.iccid));
  const foreign = request.iccids.filter((iccid) => !known.has(iccid));
  if (foreign.length > 0)
    return refused(`The following ICCIDs do not belong to your company: ${foreign.join(", ")}`);
  const row = await insertRefund(context.pool, request);
  // refund_id a string, created_at to the minute: as the 202 example ([SPEC request-refund]).
  return ok(
    { refund_id: String(row.id), created_at: airaloTime(row.created_at).slice(0, 16) },
    "success",
    202,
  );
}

export function refundShape(row: RefundRow) {
  return {
    refund_id: String(row.id),
    iccids: row.iccids,
    reason: row.reason,
    notes: row.notes,
    email: row.email,
    status: row.status,
    credited: Number(row.credited_cents) / 100,
    created_at: airaloTime(row.created_at),
    reviewed_at: row.reviewed_at ? airaloTime(row.reviewed_at) : null,
  };
}

/**
 * The manual review, decided by a test: approved credits each eSIM's order's unit net price back
 * and marks its order refunded (all eSIMs) or partially_refunded; rejected changes nothing else.
 * A request already reviewed keeps its first outcome (409 from the control route).
 */
export async function reviewRefund(
  context: Context,
  id: string,
  outcome: "approved" | "rejected",
): Promise<RefundRow | "not_found" | "already_reviewed"> {
  return inTransaction(context.pool, async (client) => {
    const refund = await selectRefund(client, id, true);
    if (!refund) return "not_found";
    if (refund.status !== "pending") return "already_reviewed";
    if (outcome === "rejected") return markRefundReviewed(client, id, "rejected", 0);
    const sims = (await selectSimsByIccids(client, refund.iccids)).filter((sim) => sim.refunded_at === null);
    let credited = 0;
    for (const sim of sims) credited += Number((await selectOrder(client, sim.order_id))!.net_price_cents);
    const orders = await refundSims(
      client,
      sims.map((sim) => sim.iccid),
    );
    for (const order of orders)
      await setOrderStatus(
        client,
        order.order_id,
        order.refunded === order.total ? "refunded" : "partially_refunded",
      );
    await addCredit(client, credited);
    return markRefundReviewed(client, id, "approved", credited);
  });
}

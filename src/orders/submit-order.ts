// Partner use case: submit a cart, pay from the wallet and provision the eSIM (spec 4.3).
// Idempotent by cart_key: the cart row lock serializes concurrent submits, and the unique
// orders.cart_key means one cart is at most one order, whatever retries arrive and where.

import assert from "node:assert/strict";
import { type LockedCart, lockCart } from "../carts/lock-cart.ts";
import { CART_EXPIRED_DETAIL, missingCartError } from "../carts/missing-cart-error.ts";
import { holdFunds } from "../ledger/transfers.ts";
import { crashPoint } from "../lib/crash-points.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { recordBalanceLow } from "../wallet/record-balance-low.ts";
import { createPendingOrderAhead } from "./create-pending-order.ts";
import { lineReference } from "./drive-group.ts";
import { type DrivenOrder, driveIfAbandoned, driveOrder } from "./drive-order.ts";
import { checkEndUser, checkLanguage, checkTravellers, type EndUser, type Traveller } from "./end-user.ts";
import { FINISH_ESIM } from "./finish.ts";
import type { OrderRow } from "./order.ts";
import { insertOrderLines } from "./order-lines.sql.ts";
import { orderByCart, orderById } from "./orders.sql.ts";
import { networkUnreachable } from "./supplier-not-served.ts";

export type SubmitInput = EndUser & {
  cart_key: string;
  client_reference: string | null;
  /** As requested (BCP 47) or null; stored resolved (checkLanguage). */
  language: string | null;
  /** One per eSIM of the cart (group orders), or null: the end user gets every eSIM. */
  travellers: Traveller[] | null;
};

/** The input once checked: its language resolved to a supported one. */
type CheckedInput = SubmitInput & { language: string };

/** Seconds a client should wait before retrying a submit that is still running. */
export const RETRY_AFTER_S = 2;

export function inProgress(order_id: string): ApiError {
  return new ApiError(
    "request_in_progress",
    `Order ${order_id} is still being processed; retry with the same key.`,
    { headers: { "retry-after": String(RETRY_AFTER_S) }, order_id },
  );
}

type Phase1 = { kind: "created" | "existing"; order: OrderRow };

function refuseStaleCart(cart: LockedCart): never {
  if (cart.expired) throw new ApiError("cart_expired", CART_EXPIRED_DETAIL);
  // A cart made before midnight UTC for "today" and submitted after it: never ask for a past start.
  throw new ApiError("invalid_start_date", `start_date ${cart.start_date} has passed; create a new cart.`);
}

/** Thrown inside phase 1 when the cart has its order already: the hold placed meanwhile rolls back. */
class CartHasOrder extends Error {}

/** `travellers`, when given, names one traveller per eSIM of the cart. */
function checkTravellerCount(cart: LockedCart, travellers: Traveller[] | null): void {
  if (travellers === null || travellers.length === cart.quantity) return;
  const message = `must have exactly ${cart.quantity} entries, one per eSIM of the cart (got ${travellers.length})`;
  throw new ApiError("invalid_request", `travellers ${message}.`, {
    errors: [
      { field: "travellers", code: travellers.length < cart.quantity ? "too_short" : "too_long", message },
    ],
  });
}

/**
 * Who the order's email goes to: the end user; of a one-eSIM cart with its one traveller named,
 * that traveller (a group's travellers are its lines', order-lines.sql.ts).
 */
function recipientOf(
  cart: LockedCart,
  input: CheckedInput,
): Pick<EndUser, "email" | "first_name" | "last_name"> {
  const only = cart.quantity === 1 ? input.travellers?.[0] : undefined;
  return only ?? { email: input.email, first_name: input.first_name, last_name: input.last_name };
}

/**
 * Phase 1, one transaction: the pending order and its hold on the wallet, sent together. The
 * order's insert goes ahead of the hold (sendAhead): both in one round trip. A cart that already
 * has its order (a retry) inserts nothing: the hold placed beside it is rolled back and that order
 * answered, without a read on the common path. An expired cart still answers the order it has.
 */
async function reserve(ctx: AppContext, partner_id: string, input: CheckedInput): Promise<Phase1> {
  try {
    return await reserveInTransaction(ctx, partner_id, input);
  } catch (error) {
    if (!(error instanceof CartHasOrder)) throw error;
    // Under the cart's lock the insert found a committed order, and orders are never deleted.
    const existing = await orderByCart(ctx.db, input.cart_key);
    assert.ok(existing, "the cart's order, found by the insert's conflict, exists");
    return { kind: "existing", order: existing };
  }
}

async function reserveInTransaction(
  ctx: AppContext,
  partner_id: string,
  input: CheckedInput,
): Promise<Phase1> {
  return ctx.db.transaction().execute(async (trx) => {
    const cart = await lockCart(trx, input.cart_key, partner_id);
    if (!cart) throw await missingCartError(trx, input.cart_key, partner_id);
    if (cart.expired || cart.start_date_passed) {
      const existing = await orderByCart(trx, cart.cart_key);
      if (existing) return { kind: "existing", order: existing };
      refuseStaleCart(cart);
    }
    if (!ctx.carrier.serves(cart.supplier)) {
      // Off the common path: a retry still answers the order its cart has (sent while it was served).
      const existing = await orderByCart(trx, cart.cart_key);
      if (existing) return { kind: "existing", order: existing };
      throw networkUnreachable(`package ${cart.package_id}`, "Nothing was charged and no order was created.");
    }
    const order_id = newId("order");
    const inserted = await createPendingOrderAhead(ctx, trx, {
      order_id,
      partner_id,
      type: "esim",
      cart_key: cart.cart_key,
      package_id: cart.package_id,
      external_package_id: cart.external_package_id,
      // The cart's copy, made with its terms: the supplier every call about this order goes to.
      supplier: cart.supplier,
      data_mb: cart.data_mb,
      validity_days: cart.validity_days,
      start_date: cart.start_date,
      total_minor: cart.total_minor,
      currency: cart.currency,
      quantity: cart.quantity,
      client_reference: input.client_reference,
      ...recipientOf(cart, input),
      phone: input.phone,
      iccid: null,
      language: input.language,
    });
    const hold = await holdFunds(trx, partner_id, order_id, cart.total_minor, cart.currency);
    const order = await inserted.order();
    if (order === null) throw new CartHasOrder();
    // Only for the attempt that creates the order: a retry gets the cart's order, whatever it names.
    checkTravellerCount(cart, input.travellers);
    if (!hold) {
      // Throwing rolls back the transaction, order included: a 402 leaves no trace but the unchanged cart.
      throw new ApiError(
        "insufficient_balance",
        "The wallet balance does not cover this cart. Nothing was charged.",
      );
    }
    await recordBalanceLow(trx, partner_id, hold);
    if (cart.quantity > 1) {
      // One line per eSIM, each with its own carrier reference and its traveller, if named.
      const lines = Array.from({ length: cart.quantity }, (_, position) => ({
        position,
        reference: lineReference(order_id, position),
        traveller: input.travellers?.[position] ?? null,
      }));
      await insertOrderLines(trx, order_id, lines);
    }
    return { kind: "created", order };
  });
}

/**
 * The order in its state after this attempt (completed, failed, or still pending), and whether the
 * answer is a replay: an outcome an earlier request with this cart_key reached, not this one
 * (`Idempotent-Replayed: true`, as top-ups answer). Finishing an abandoned attempt is no replay.
 */
export async function submitOrder(
  ctx: AppContext,
  partner_id: string,
  raw: SubmitInput,
): Promise<{ order: DrivenOrder; replayed: boolean }> {
  const input = {
    ...raw,
    ...checkEndUser(raw),
    language: checkLanguage(raw.language),
    travellers: raw.travellers === null ? null : checkTravellers(raw.travellers),
  };
  // A created order's lease is taken by its insert, in this phase: its age counts from here.
  const leased_at = performance.now();
  const reserved = await reserve(ctx, partner_id, input);
  if (reserved.kind === "created") {
    crashPoint("after_pending_commit");
    return { order: await driveOrder(ctx, reserved.order, FINISH_ESIM, leased_at), replayed: false };
  }
  if (reserved.order.status !== "pending") return { order: reserved.order, replayed: true };
  // A retry of a pending order: drive it if its first attempt is gone (its lease ran out, or its
  // process stopped beating: a crash), else tell the client to wait.
  const driven = await driveIfAbandoned(ctx, reserved.order.order_id, FINISH_ESIM);
  if (driven) return { order: driven, replayed: false };
  // The lease was held, or the order finished between our read and the claim: answer what it is now.
  const now = await orderById(ctx.db, reserved.order.order_id);
  if (now && now.status !== "pending") return { order: now, replayed: true };
  throw inProgress(reserved.order.order_id);
}

// Partner use case: top up an existing eSIM, paid from the wallet (spec 4.5, design.md "Top-up").
// The spec's order maps onto the two phases of a new-eSIM submit:
//   1. validate the ICCID: its shape (before anything else), then that it is this partner's eSIM;
//   2. check the balance: the pending transfer (hold) of phase 1, in one transaction with the
//      pending order (its own outbox for the resolver sweep) and the Idempotency-Key row;
//   3. provision with the carrier, the order id as reference: driveOrder, no transaction held;
//   4. record the order and debit: the completion transaction posts the hold, inserts the
//      purchase (drive-order.ts) and stores the outcome on the Idempotency-Key (finish-topup.ts).
//
// With an Idempotency-Key the key is claimed first thing in phase 1's transaction (its insert
// goes out with the eSIM's read, in one round trip), naming the order the transaction creates
// later (its foreign key is checked at COMMIT, migration 0016), so:
// - a 400/404/422 thrown later in that transaction rolls the key back with everything else;
// - concurrent requests with one key serialize on its unique index and row lock;
// - a replay answers from the key before the catalog or the wallet are looked at, so the same
//   request replays its stored outcome even after the offer or the balance changed.
// Stored outcomes: 200 and 502 (by the order's completion) and 402 (here, in phase 1's own
// transaction, which wrote nothing else). Not stored: validation errors, 409, and 503 — a 503
// leaves the key 'running' on its pending order, and a retry with the key drives that same order
// again (same carrier reference, so never a second top-up) or gets 409 while someone else does.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { holdFunds } from "../ledger/transfers.ts";
import { crashPoint } from "../lib/crash-points.ts";
import { createPendingOrderAhead } from "../orders/create-pending-order.ts";
import { driveIfAbandoned, driveOrder } from "../orders/drive-order.ts";
import { checkEndUser, type EndUser, e164Of } from "../orders/end-user.ts";
import type { OrderRow } from "../orders/order.ts";
import { type EsimRow, lockEsimOrderRefundUnderWay, partnerEsim } from "../orders/partner-esim.ts";
import { inProgress } from "../orders/submit-order.ts";
import { networkUnreachable } from "../orders/supplier-not-served.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { problemBody } from "../shared/problem.ts";
import { recordBalanceLow } from "../wallet/record-balance-low.ts";
import { finishTopUp } from "./finish-topup.ts";
import {
  answerExisting,
  claimKeyAhead,
  type IdempotencyClaim,
  type KeyRef,
  type NewKey,
  type StoredOutcome,
} from "./idempotency.ts";
import { completeKeyWithoutOrder, storedResponse } from "./idempotency-keys.sql.ts";
import { foundEsim, requireValidIccid } from "./topup-esim.ts";
import { offeredTopUp, takesTopUps } from "./topup-offer.ts";

export type TopUpInput = EndUser & {
  iccid: string;
  package_id: string;
  external_package_id: string;
  client_reference: string | null;
};

/**
 * The request as this use case acts on it: an absent client_reference is null, names and email are
 * trimmed (as checkEndUser stores them). The key's fingerprint is taken of it, so two bodies the
 * service treats alike are one request.
 */
export function normaliseTopUp(
  body: Omit<TopUpInput, "client_reference"> & { client_reference?: string | null },
): TopUpInput {
  return {
    iccid: body.iccid,
    package_id: body.package_id,
    external_package_id: body.external_package_id,
    email: body.email.trim(),
    // E.164 when it reads as one: "+1 415 555 0123" and "+14155550123" are one request.
    phone: e164Of(body.phone) ?? body.phone,
    first_name: body.first_name.trim(),
    last_name: body.last_name.trim(),
    client_reference: body.client_reference ?? null,
  };
}

export type { IdempotencyClaim, StoredOutcome };

export type TopUpOutcome = { kind: "order"; order: OrderRow } | { kind: "stored"; stored: StoredOutcome };

type Phase1 =
  | { kind: "created"; order: OrderRow }
  | { kind: "stored"; stored: StoredOutcome }
  /** The key's first request created this order, which is still pending. */
  | { kind: "running"; order_id: string };

/** Phase 1 as its transaction ends: a created order's row arrives with the COMMIT (sendAhead). */
type Reserved =
  | Exclude<Phase1, { kind: "created" }>
  | { kind: "inserted"; order(): Promise<OrderRow | null> };

function insufficientBalance(): ApiError {
  return new ApiError(
    "insufficient_balance",
    "The wallet balance does not cover this top-up. Nothing was charged.",
  );
}

/**
 * A top-up sold while the eSIM's refund waits at its supplier (Airalo reviews for days) would be
 * credited with it once approved (finish-refund.ts), after the supplier delivered it.
 */
function refundUnderWay(iccid: string): ApiError {
  return new ApiError(
    "topup_not_available",
    `A refund of eSIM ${iccid} is under way: it can take no top-up (GET /orders/available-topups/{iccid} lists none). Nothing was charged.`,
  );
}

/**
 * Phase 1 after the key (if any) is claimed and the eSIM read: the offer, the hold, the pending
 * order, with the id the key was inserted with.
 */
async function createOrder(
  ctx: AppContext,
  trx: Transaction<Database>,
  partner_id: string,
  order_id: string,
  input: TopUpInput,
  key: NewKey | null,
  esim: EsimRow,
): Promise<Reserved> {
  if (!takesTopUps(esim.status)) {
    throw new ApiError(
      "topup_not_available",
      `eSIM ${esim.iccid} is ${esim.status}: it can take no top-up (GET /orders/available-topups/{iccid} lists none).`,
    );
  }
  if (await lockEsimOrderRefundUnderWay(trx, esim)) throw refundUnderWay(esim.iccid);
  const row = await offeredTopUp(trx, partner_id, esim, input);
  if (row === "other_supplier") {
    // Partners never see suppliers: the refusal names the network, which is what decides it.
    throw new ApiError(
      "topup_not_available",
      `Package ${input.package_id} (${input.external_package_id}) runs on another network than eSIM ${esim.iccid} ` +
        "and cannot top it up. Pick a row of GET /orders/available-topups/{iccid}.",
    );
  }
  if (!row) {
    throw new ApiError(
      "topup_not_available",
      `Package ${input.package_id} (${input.external_package_id}) is not offered as a top-up for eSIM ${esim.iccid}. ` +
        "Pick a row of GET /orders/available-topups/{iccid} and send both of its ids unchanged.",
    );
  }
  if (!ctx.carrier.serves(esim.supplier)) {
    throw networkUnreachable(`eSIM ${esim.iccid}`, "Nothing was charged and no order was created.");
  }
  // The hold first: when funds are short it writes nothing, so the key alone records the 402.
  const hold = await holdFunds(trx, partner_id, order_id, row.wholesale_minor, row.currency);
  if (!hold) {
    if (key === null) throw insufficientBalance();
    const body = JSON.stringify(problemBody(insufficientBalance(), key.request_id));
    await completeKeyWithoutOrder(trx, key, { status: 402, body });
    return { kind: "stored", stored: { status: 402, body, replayed: false } };
  }
  await recordBalanceLow(trx, partner_id, hold);
  // Nothing reads the order before the COMMIT: its insert goes with it, and the key's foreign key
  // to it is checked then.
  const inserted = await createPendingOrderAhead(ctx, trx, {
    order_id,
    partner_id,
    type: "topup",
    quantity: 1,
    cart_key: null,
    package_id: row.package_id,
    external_package_id: row.external_package_id,
    // The eSIM's supplier, which the offer matched (rule 5): its own supplier tops it up.
    supplier: esim.supplier,
    data_mb: row.data_mb,
    validity_days: row.validity_days,
    start_date: null,
    total_minor: row.wholesale_minor,
    currency: row.currency,
    client_reference: input.client_reference,
    email: input.email,
    phone: input.phone,
    first_name: input.first_name,
    last_name: input.last_name,
    iccid: esim.iccid,
    // A top-up mails nothing: the eSIM's page keeps the language of the order that bought it.
    language: "en",
  });
  return { kind: "inserted", order: () => inserted.order() };
}

/** Phase 1, one transaction. */
async function reserve(
  ctx: AppContext,
  partner_id: string,
  input: TopUpInput,
  claim: IdempotencyClaim | null,
): Promise<Phase1> {
  // The order's id is chosen first: the key is inserted naming it, so no statement links them later.
  const order_id = newId("order");
  const key: (NewKey & Pick<IdempotencyClaim, "legacy_fingerprint">) | null =
    claim === null ? null : { partner_id, ...claim, order_id, ttl_hours: ctx.config.idempotency_ttl_hours };
  const reserved = await ctx.db.transaction().execute(async (trx): Promise<Reserved> => {
    // The key's claim goes out with the eSIM's read (sendAhead): one round trip for both. A key
    // that exists answers before what the read found is looked at.
    const claiming = key === null ? null : { key, ahead: await claimKeyAhead(trx, key) };
    const esim = await partnerEsim(trx, partner_id, input.iccid);
    if (claiming !== null) {
      const claimed = await claiming.ahead.claim();
      if (claimed.kind === "existing") return answerExisting(claimed.row, claiming.key);
    }
    return createOrder(ctx, trx, partner_id, order_id, input, key, foundEsim(esim, input.iccid));
  });
  if (reserved.kind !== "inserted") return reserved;
  // Read after the COMMIT: the order stands (pending, held; the resolver finishes it) even if this
  // throws, as after a crash here. Neither can happen: no cart, no conflict; a row we wrote parses.
  const order = await reserved.order();
  assert.ok(order, "a top-up order has no cart, so its insert never conflicts");
  return { kind: "created", order };
}

/**
 * A retry of a key whose order is pending: drive the order if its first attempt is gone (lease
 * expired, or its process stopped beating: a crash), else 409. Once final, the key holds the
 * outcome: answer its bytes.
 */
async function continueRunning(ctx: AppContext, key: KeyRef, order_id: string): Promise<TopUpOutcome> {
  const driven = await driveIfAbandoned(ctx, order_id, finishTopUp(ctx.config.idempotency_ttl_hours));
  const stored = await storedResponse(ctx.db, key);
  if (stored !== null) return { kind: "stored", stored: { ...stored, replayed: true } };
  if (driven === null) throw inProgress(order_id);
  return { kind: "order", order: driven };
}

/** Returns what to answer: an order in its state after this attempt, or stored bytes. */
export async function submitTopUp(
  ctx: AppContext,
  partner_id: string,
  raw: TopUpInput,
  claim: IdempotencyClaim | null,
): Promise<TopUpOutcome> {
  requireValidIccid(raw.iccid);
  const input = { ...raw, ...checkEndUser(raw) };
  // A created order's lease is taken by its insert, in phase 1: its age counts from here.
  const leased_at = performance.now();
  const reserved = await reserve(ctx, partner_id, input, claim);
  if (reserved.kind === "stored") return reserved;
  if (reserved.kind === "running") {
    assert.ok(claim, "only a key can find a running request");
    return continueRunning(ctx, { partner_id, idempotency_key: claim.idempotency_key }, reserved.order_id);
  }
  crashPoint("after_pending_commit");
  const finish = finishTopUp(ctx.config.idempotency_ttl_hours);
  return { kind: "order", order: await driveOrder(ctx, reserved.order, finish, leased_at) };
}

// Driving a group order (issue 34): one carrier call per eSIM, GROUP_PARALLELISM at a time, each
// with its line's own reference (`{order_id}-{position}`), so a line asked again (a retry, the
// resolver after a crash) gets the profile it already has, never a second one. Each answer is
// recorded on its line at once (order-lines.sql.ts): a crash loses at most the calls in flight,
// which the next driver asks again. Once no line is pending the order ends in one transaction:
// completed with the lines made (the hold posted for them only, the rest released), or failed
// when the carrier refused every line (the hold voided). A line whose outcome stays unknown keeps
// the order pending: the client is told to retry, and the resolver drives the rest later.
import assert from "node:assert/strict";
import type { LookedUpOutcome, ProvisionedProfile } from "../carrier/carrier.ts";
import { recordEventLater } from "../events/record-event.ts";
import { postPartOfHold } from "../ledger/transfers.ts";
import { crashPoint } from "../lib/crash-points.ts";
import type { AppContext } from "../shared/context.ts";
import type { OrderFinish } from "./finish.ts";
import { mayCallCarrier } from "./lease.ts";
import type { OrderLine, OrderPurchase, OrderRow, PurchaseRow } from "./order.ts";
import {
  type CompletedGroup,
  completeGroupOrder,
  type LineOutcome,
  linesOf,
  recordLine,
} from "./order-lines.sql.ts";
import { type CompletedOrder, lockOwnLease, orderById, releaseLease } from "./orders.sql.ts";
import { fail } from "./record-outcome.ts";
import { renderOrder } from "./render-order.ts";

/**
 * Carrier calls of one group order in flight at once: fast enough for 50 eSIMs within a few
 * operations' time, and never more than a few of the carrier's connections for one partner.
 */
export const GROUP_PARALLELISM = 5;

/** The carrier reference of a group order's line: the order's id, then its position. */
export function lineReference(order_id: string, position: number): string {
  return `${order_id}-${position}`;
}

/** Calls the carrier for one pending line and records its word; unknown leaves it pending. */
async function driveLine(ctx: AppContext, order: OrderRow, line: OrderLine): Promise<void> {
  const outcome = await ctx.carrier.provisionProfile({
    reference: line.reference,
    supplier: order.supplier,
    external_package_id: order.external_package_id,
    data_mb: order.data_mb,
    validity_days: order.validity_days,
    start_date: order.start_date,
    // The traveller's address: the sandbox's magic addresses act per traveller.
    end_user_email: line.email ?? order.email,
  });
  crashPoint("after_carrier_answer");
  if (outcome.kind === "ok") {
    const profile: ProvisionedProfile = outcome.value;
    await recordLine(ctx.db, order.order_id, line.position, { kind: "completed", ...pick(profile) });
  } else if (outcome.kind === "refused") {
    await recordLine(ctx.db, order.order_id, line.position, {
      kind: "failed",
      carrier_refusal: outcome.reason,
    });
  }
}

function pick(profile: ProvisionedProfile) {
  return {
    iccid: profile.iccid,
    smdp_address: profile.smdp_address,
    activation_code: profile.activation_code,
  };
}

/**
 * Runs `drive` on each pending line, at most GROUP_PARALLELISM at once. Before each call the holder
 * checks it may still call (mayCallCarrier: the lease renewed once the claim is not fresh), so no
 * call starts after the lease could have passed to another driver; a holder that may not stops. A
 * line that throws (a statement failed) stops the others from starting more, and the first error
 * is thrown only once every call in flight has ended: the caller then releases the lease, and a
 * call still running after that would be a call without it.
 */
async function driveLines(
  ctx: AppContext,
  order: OrderRow,
  pending: OrderLine[],
  leased_at: number,
  drive: (line: OrderLine) => Promise<void>,
): Promise<void> {
  let next = 0;
  let driven = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped && next < pending.length) {
      const line = pending[next++]!;
      if (!(await mayCallCarrier(ctx, order, leased_at))) {
        stopped = true;
        return;
      }
      try {
        await drive(line);
      } catch (error) {
        stopped = true;
        throw error;
      }
      if (++driven === 2) crashPoint("after_second_group_line");
    }
  };
  const workers = Array.from({ length: Math.min(GROUP_PARALLELISM, pending.length) }, worker);
  const ended = await Promise.allSettled(workers);
  const failed = ended.find((result) => result.status === "rejected");
  if (failed !== undefined) throw failed.reason;
}

/** The order's end once no line is pending, under its lease; null when it is not this driver's to end. */
async function finishGroup(
  ctx: AppContext,
  order: OrderRow,
  lines: OrderLine[],
  finish: OrderFinish,
  failure_code = "carrier_error",
): Promise<CompletedOrder | OrderRow | null> {
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await lockOwnLease(trx, order.order_id, order.lease_token))) return null;
    if (!lines.some((line) => line.status === "completed")) {
      const refusal = lines[0]?.carrier_refusal ?? "the carrier refused every eSIM";
      return fail(trx, order, refusal, finish, failure_code);
    }
    const completed = await completeGroupOrder(trx, {
      order_id: order.order_id,
      first_sync_after_s: ctx.config.usage_sync_min_interval_s,
      confirmation_email: finish.confirmation_email,
    });
    if (completed === null) return null;
    assertWhole(completed);
    // The completed lines' price, no more: what was held for the others is released.
    await postPartOfHold(trx, order.order_id, completed.total_minor);
    const { esims: _e, bundles: _b, emails: _m, purchases, ...row } = completed;
    // The entries GET /v1/orders/{orderID} renders, from what this transaction wrote: no read.
    const done: CompletedOrder = { ...row, purchases: withRefusedLines(row, purchases, lines) };
    await recordEventLater(trx, {
      partner_id: order.partner_id,
      type: "order.completed",
      data: renderOrder(done, done.purchases),
    });
    await finish.completed(trx, done);
    return done;
  });
}

function assertWhole(completed: CompletedGroup): void {
  const made = completed.purchases.length;
  if (made < 1 || completed.esims !== made || completed.bundles !== made) {
    throw new Error(
      `group order ${completed.order_id}: ${made} purchases, ${completed.esims} eSIMs, ${completed.bundles} bundles`,
    );
  }
}

/** Order.purchases of a completed group: the eSIMs made and the lines refused, by position. */
function withRefusedLines(order: OrderRow, made: PurchaseRow[], lines: OrderLine[]): OrderPurchase[] {
  const failed = lines
    .filter((line) => line.status === "failed")
    .map((line) => ({
      order_id: order.order_id,
      position: line.position,
      package_id: order.package_id,
      start_date: order.start_date,
      status: "failed" as const,
    }));
  const completed = made.map((p) => ({ ...p, status: "completed" as const }));
  return [...completed, ...failed].sort((a, b) => a.position - b.position);
}

/**
 * Drives a group order whose lease the caller took at `leased_at`, and returns it as it now is:
 * completed or failed when every line is final, else pending (its lease released, so a retry or
 * the resolver asks the unknown lines again at once).
 */
export async function driveGroup(
  ctx: AppContext,
  order: OrderRow,
  finish: OrderFinish,
  leased_at: number,
): Promise<CompletedOrder | OrderRow> {
  try {
    const pending = (await linesOf(ctx.db, order.order_id)).filter((line) => line.status === "pending");
    await driveLines(ctx, order, pending, leased_at, (line) => driveLine(ctx, order, line));
    const lines = await linesOf(ctx.db, order.order_id);
    if (lines.every((line) => line.status !== "pending")) {
      const ended = await finishGroup(ctx, order, lines, finish);
      crashPoint("after_completion_commit");
      if (ended !== null) return ended;
    }
    await releaseLease(ctx.db, order.order_id, order.lease_token);
  } catch (error) {
    // As driveOrder: the lease goes with this drive, so the retry drives the order at once.
    await releaseLease(ctx.db, order.order_id, order.lease_token).catch(() => undefined);
    throw error;
  }
  const now = await orderById(ctx.db, order.order_id);
  if (now === null) throw new Error(`order ${order.order_id} vanished`);
  return now;
}

/**
 * How the resolver's last look ends a line: what the carrier's record says, given up when it has
 * none, and null (still pending) when it could not be asked. A single order failed without the
 * carrier's word is owed a later look that cancels what the carrier made (check-failed-at-carrier.ts);
 * those looks are per order, so a group line waits for the carrier's word instead: its eSIM is never
 * made free of charge, and its hold stays until the carrier answers.
 */
function lastWord(carrier: LookedUpOutcome, given_up: string): LineOutcome | null {
  if (carrier.kind === "ok") {
    // A line's reference is only ever provisioned: its record is a profile.
    assert.ok("activation_code" in carrier.value, "a group line's carrier record is a profile");
    return { kind: "completed", ...pick(carrier.value) };
  }
  if (carrier.kind === "refused") return { kind: "failed", carrier_refusal: carrier.reason };
  if (carrier.kind === "unavailable") return null;
  return { kind: "failed", carrier_refusal: given_up };
}

/**
 * The resolver's last look at a group past PENDING_FAIL_AFTER_HOURS (give-up-order.ts), under the
 * lease it claimed at `leased_at`: each pending line is looked up by its own reference, which
 * provisions nothing. What the carrier made is completed, what it refused fails, and a line it has
 * no record of fails as given up, never charged; one it could not be asked about stays pending
 * (lastWord), and the order with it until a later round gets an answer. The order then ends
 * as every group does: completed for the lines made, charged for them alone (never the whole order
 * failed while the carrier holds profiles made for its lines), or failed with `failure_code`, its
 * hold voided, when none was made.
 */
export async function giveUpGroup(
  ctx: AppContext,
  order: OrderRow,
  finish: OrderFinish,
  leased_at: number,
  given_up: { failure_code: string; detail: (carrier: LookedUpOutcome) => string },
): Promise<"completed" | "failed" | "pending"> {
  try {
    const pending = (await linesOf(ctx.db, order.order_id)).filter((line) => line.status === "pending");
    await driveLines(ctx, order, pending, leased_at, async (line) => {
      const carrier = await ctx.carrier.lookUpOutcome(line.reference, order.supplier);
      const word = lastWord(carrier, given_up.detail(carrier));
      if (word !== null) await recordLine(ctx.db, order.order_id, line.position, word);
    });
    const lines = await linesOf(ctx.db, order.order_id);
    // A look not made (the lease no longer this holder's), or a line the carrier could not be asked
    // about: the order stays pending, and the next round looks again.
    if (lines.some((line) => line.status === "pending")) return "pending";
    const ended = await finishGroup(ctx, order, lines, finish, given_up.failure_code);
    return ended === null ? "pending" : ended.status === "completed" ? "completed" : "failed";
  } finally {
    await releaseLease(ctx.db, order.order_id, order.lease_token).catch(() => undefined);
  }
}

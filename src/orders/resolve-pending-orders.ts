// The resolver: finishes every order its request left behind (process killed, carrier timeout)
// by asking the carrier again with the same reference. A pending order is its own outbox: the
// sweep (server/worker.ts) claims due orders whose lease has expired, and at once those whose
// lease holder's process stopped beating (a crash, shared/liveness.ts), with `FOR UPDATE SKIP
// LOCKED` (orders.sql.ts claimDueOrders), leasing each to itself and pushing its next look back
// with capped backoff, then drives them. While the carrier stays unreachable an order is asked
// again less and less often, never abandoned; it never guesses an outcome, since a guess could
// charge for nothing or provision for free. Past PENDING_GIVE_UP_HOURS the operator is told to settle
// it; past PENDING_FAIL_AFTER_HOURS (issue 32) the resolver takes one last look and ends it
// (give-up-order.ts): completed if the carrier made it, failed otherwise, the hold voided.
import type { AppContext } from "../shared/context.ts";
import { checkFailedAtCarrier } from "./check-failed-at-carrier.ts";
import { driveOrder, leaseClaim } from "./drive-order.ts";
import type { FinishByType } from "./finish.ts";
import { flagGivenUpOrders } from "./flag-given-up-orders.ts";
import { giveUpOrder, pastFailAge } from "./give-up-order.ts";
import { claimDueOrders } from "./orders.sql.ts";

/** The longest wait between two looks at an order the carrier does not answer for. */
export const MAX_RESOLVE_BACKOFF_S = 5 * 60;

export type ResolveLog = {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
};

/**
 * One round of the resolver sweep: claims at most `limit` due pending orders and drives them side
 * by side (each its own carrier call, no transaction held during it). Returns how many it claimed.
 */
export async function resolveDueOrders(
  ctx: AppContext,
  finishers: FinishByType,
  limit: number,
  log: ResolveLog,
): Promise<number> {
  const leased_at = performance.now();
  const claimed = await claimDueOrders(ctx.db, {
    limit,
    ...leaseClaim(ctx),
    max_backoff_s: MAX_RESOLVE_BACKOFF_S,
  });
  await Promise.all(
    claimed.map(async (order) => {
      try {
        if (pastFailAge(ctx, order)) {
          const ended = await giveUpOrder(ctx, order, finishers[order.type], leased_at);
          log.warn({ order_id: order.order_id, status: ended }, "resolver: gave the order a last look");
          return;
        }
        const driven = await driveOrder(ctx, order, finishers[order.type], leased_at);
        if (driven.status === "failed") {
          log.warn(
            { order_id: order.order_id, carrier_refusal: driven.carrier_refusal },
            "resolver: carrier refused",
          );
        } else {
          log.info({ order_id: order.order_id, status: driven.status }, "resolver: order driven");
        }
      } catch (error) {
        // The database away, a bug: the order stays pending and comes due again after its backoff.
        log.error({ err: error, order_id: order.order_id }, "resolver: driving the order failed");
      }
    }),
  );
  return claimed.length;
}

export const FLAG_GIVEN_UP_ORDERS_TASK = "flag_given_up_orders";
/** Every ten minutes, across all processes (graphile-worker runs each cron tick once). */
export const FLAG_GIVEN_UP_ORDERS_CRONTAB = `*/10 * * * * ${FLAG_GIVEN_UP_ORDERS_TASK}`;

/** A scheduled task: names the orders past PENDING_GIVE_UP_HOURS in an error log line, and runs the carrier checks owed. */
export function flagGivenUpOrdersTask(ctx: AppContext) {
  return async (_payload: unknown, helpers: { logger: { error(message: string): void } }) => {
    await flagGivenUpOrders(ctx, (message) => helpers.logger.error(message));
    // The same ten-minute tick: orders failed without the carrier's word, looked up again.
    await checkFailedAtCarrier(ctx, (message) => helpers.logger.error(message));
  };
}

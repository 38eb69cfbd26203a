// The resolver job (`resolve_pending_order`): added in the same transaction as every pending
// order, it runs after RESOLVE_AFTER_MS and finishes any order its request left behind
// (process killed, carrier timeout) by asking the carrier again with the same reference.
// While the carrier stays unreachable it re-schedules itself with capped backoff, so an order
// is never abandoned; it never guesses an outcome, since a guess could charge for nothing or
// provision for free.
import type { JobHelpers, Task } from "graphile-worker";
import type { AppContext } from "../shared/context.ts";
import { driveIfAbandoned } from "./drive-order.ts";
import type { FinishByType } from "./finish.ts";
import { flagGivenUpOrders } from "./flag-given-up-orders.ts";
import { orderById } from "./orders.sql.ts";

export const RESOLVE_PENDING_ORDER_TASK = "resolve_pending_order";
const MAX_RETRY_DELAY_MS = 5 * 60_000;
const BUSY_RETRY_DELAY_MS = 5_000;

type Payload = { order_id: string; attempt: number };

function parsePayload(payload: unknown): Payload {
  const value = payload as Partial<Payload> | null;
  if (!value || typeof value.order_id !== "string" || value.order_id.length > 100) {
    throw new Error("resolve_pending_order: payload needs an order_id");
  }
  return { order_id: value.order_id, attempt: Number.isSafeInteger(value.attempt) ? value.attempt! : 0 };
}

async function reschedule(helpers: JobHelpers, payload: Payload, delay_ms: number): Promise<void> {
  await helpers.addJob(
    RESOLVE_PENDING_ORDER_TASK,
    { order_id: payload.order_id, attempt: payload.attempt + 1 },
    { runAt: new Date(Date.now() + delay_ms), jobKey: `resolve:${payload.order_id}`, maxAttempts: 10 },
  );
}

function backoffMs(payload: Payload): number {
  return Math.min(MAX_RETRY_DELAY_MS, 1_000 * 2 ** Math.min(payload.attempt + 1, 12));
}

async function resolveOnce(
  ctx: AppContext,
  finishers: FinishByType,
  helpers: JobHelpers,
  payload: Payload,
): Promise<void> {
  const order = await orderById(ctx.db, payload.order_id);
  if (order?.status !== "pending") return;
  const driven = await driveIfAbandoned(ctx, payload.order_id, finishers[order.type]);
  if (driven === null) {
    // Someone (a retrying client) is driving it right now: look again shortly.
    await reschedule(helpers, payload, BUSY_RETRY_DELAY_MS);
    return;
  }
  helpers.logger.info(`order ${payload.order_id} resolved as ${driven.status}`);
  if (driven.status === "failed") {
    helpers.logger.warn(`order ${payload.order_id}: the carrier refused: ${driven.carrier_refusal ?? ""}`);
  }
  if (driven.status === "pending") await reschedule(helpers, payload, backoffMs(payload));
}

/**
 * `finishers`: the finishing steps of each order type (orders/finish.ts), given by the server,
 * which knows every domain that creates orders.
 */
export function resolvePendingOrderTask(ctx: AppContext, finishers: FinishByType): Task {
  return async (raw, helpers) => {
    const payload = parsePayload(raw);
    try {
      await resolveOnce(ctx, finishers, helpers, payload);
    } catch (error) {
      // An unexpected failure (the database away, a bug) must not spend the job's attempts and
      // strand the order: schedule the next look ourselves. If even that fails, throwing lets
      // graphile-worker retry, and requeue_pending_orders picks up anything left behind.
      helpers.logger.error(`resolving order ${payload.order_id} failed: ${(error as Error).message}`);
      await reschedule(helpers, payload, backoffMs(payload));
    }
  };
}

export const REQUEUE_PENDING_ORDERS_TASK = "requeue_pending_orders";
/** Every ten minutes, across all processes (graphile-worker runs each cron tick once). */
export const REQUEUE_PENDING_ORDERS_CRONTAB = `*/10 * * * * ${REQUEUE_PENDING_ORDERS_TASK}`;
const MAX_REQUEUED = 1_000;

/**
 * The safety net under the resolver: every pending order whose lease has expired and which is
 * older than RESOLVE_AFTER_MS gets its resolver job back. The job key makes this a no-op for an
 * order whose job is waiting, and revives one whose job ran out of attempts.
 */
export function requeuePendingOrdersTask(ctx: AppContext): Task {
  return async (_payload, helpers) => {
    const result = await helpers.query<{ order_id: string }>(
      `select order_id from orders
       where status = 'pending' and (lease_until is null or lease_until <= now())
         and created_at < now() - make_interval(secs => $1::float8)
       order by created_at limit $2`,
      [ctx.config.resolve_after_ms / 1000, MAX_REQUEUED],
    );
    for (const { order_id } of result.rows) {
      await helpers.addJob(
        RESOLVE_PENDING_ORDER_TASK,
        { order_id, attempt: 0 },
        { jobKey: `resolve:${order_id}`, jobKeyMode: "preserve_run_at", maxAttempts: 10 },
      );
    }
    if (result.rows.length > 0) helpers.logger.warn(`requeued ${result.rows.length} pending orders`);
    await flagGivenUpOrders(ctx, (message) => helpers.logger.error(message));
  };
}

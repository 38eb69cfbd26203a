// The graphile-worker task `send_confirmation_email` (spec section 6): the confirmation email of
// a completed new-eSIM order, delivered at least once and, in all but one crash window, exactly once.
//
// The job is added by addConfirmationEmailJob() inside the transaction that marks the order
// completed, so it exists if and only if the order completed. The task:
//   1. loads the order, its first purchase and the package name, through the function the
//      orders domain gives it (`findOrder`: notifications never read the orders' tables);
//   2. stops if `email_deliveries` already has the order (a delivered email is never sent again);
//   3. renders, then in one transaction: takes a per-order advisory lock (two jobs for one order
//      never send side by side), checks `email_deliveries` again, sends, records the delivery.
// An SMTP failure throws, the transaction rolls back, and graphile-worker retries the job with
// exponential backoff (exp(min(attempt, 10)) seconds: with 25 attempts about four days in all).

import type { JobHelpers } from "graphile-worker";
import { CompiledQuery, type Selectable } from "kysely";
import type pg from "pg";
import type { Executor } from "../db/executor.ts";
import { inTransaction } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import type { Mailer } from "./mailer.ts";
import { renderConfirmationEmail } from "./render-confirmation-email.ts";

export const SEND_CONFIRMATION_EMAIL_TASK = "send_confirmation_email";

/**
 * Recommended and used by addConfirmationEmailJob: 25 attempts span about four days of
 * backoff, enough to ride out an SMTP relay outage over a weekend. A job that still fails stays
 * in graphile_worker's jobs with its last_error for an operator to see.
 */
export const CONFIRMATION_EMAIL_MAX_ATTEMPTS = 25;

export type ConfirmationEmailPayload = { order_id: string };

/** What the email needs of an order; purchase fields are null when it has no first purchase. */
export type OrderForEmail = Pick<
  Selectable<Database["orders"]>,
  "type" | "status" | "email" | "first_name"
> & {
  [K in "iccid" | "smdp_address" | "activation_code" | "start_date"]:
    | Selectable<Database["purchases"]>[K]
    | null;
} & { package_name: string | null };

export type SendConfirmationEmailDeps = {
  pool: pg.Pool;
  mailer: Mailer;
  /** The order by id, or null (orders/order-for-email.ts). */
  findOrder: (order_id: string) => Promise<OrderForEmail | null>;
};

export type SendConfirmationEmailOutcome = "sent" | "already_delivered" | "refunded";

type Logger = { info(message: string, meta?: Record<string, unknown>): void };

/** Anything with pg's query method: a pg.PoolClient inside the caller's transaction. */
export type SqlExecutor = { query(text: string, values?: unknown[]): Promise<unknown> };

// Named arguments, checked against graphile-worker 0.18's add_job(identifier, payload, queue_name,
// run_at, max_attempts, job_key, priority, flags, job_key_mode). The job_key makes a second add
// for the same order update the one waiting job instead of adding another. 'replace' and
// 'preserve_run_at' differ only for a job not yet attempted whose run_at lies in the future, which
// this job never has; in both, a re-add while the job is running starts a second job, and the
// advisory lock and the email_deliveries check below make that second job send nothing.
const ADD_CONFIRMATION_EMAIL_JOB_SQL = `
select graphile_worker.add_job(
  identifier := 'send_confirmation_email',
  payload := json_build_object('order_id', $1::text),
  max_attempts := ${CONFIRMATION_EMAIL_MAX_ATTEMPTS},
  job_key := 'confirmation-email:' || $1::text,
  job_key_mode := 'replace'
)`;

// Transaction-scoped, so it is released by commit or rollback whatever happens to this process.
const TRY_LOCK_SQL = `
select pg_try_advisory_xact_lock(hashtextextended('confirmation-email:' || $1::text, 0)) as locked`;

const DELIVERED_SQL = `select exists (select 1 from email_deliveries where order_id = $1) as delivered`;

const RECORD_DELIVERY_SQL = `
insert into email_deliveries (order_id, message_id, recipient)
values ($1, $2, $3)
on conflict (order_id) do nothing`;

type LoadedOrder = Omit<OrderForEmail, "iccid" | "smdp_address" | "activation_code" | "package_name"> & {
  iccid: string;
  smdp_address: string;
  activation_code: string;
  package_name: string;
};

/**
 * Adds the confirmation email job with SQL, on the caller's connection: call it inside the
 * transaction that completes the order, so the job commits or rolls back with the order.
 */
export async function addConfirmationEmailJobSql(executor: SqlExecutor, order_id: string): Promise<void> {
  assertOrderId(order_id);
  await executor.query(ADD_CONFIRMATION_EMAIL_JOB_SQL, [order_id]);
}

/** The same, in a Kysely transaction: how the order's completion adds it (orders/finish.ts). */
export async function addConfirmationEmailJob(trx: Executor, order_id: string): Promise<void> {
  assertOrderId(order_id);
  await trx.executeQuery(CompiledQuery.raw(ADD_CONFIRMATION_EMAIL_JOB_SQL, [order_id]));
}

/** A graphile-worker Task; register it as `taskList: { send_confirmation_email: ... }`. */
export function sendConfirmationEmailTask(
  deps: SendConfirmationEmailDeps,
): (payload: unknown, helpers: JobHelpers) => Promise<void> {
  return async (payload, helpers) => {
    const { order_id } = parsePayload(payload);
    await sendConfirmationEmail(deps, order_id, helpers.logger);
  };
}

/** Sends the order's confirmation email unless it was delivered already. Throws to be retried. */
export async function sendConfirmationEmail(
  deps: SendConfirmationEmailDeps,
  order_id: string,
  logger: Logger,
): Promise<SendConfirmationEmailOutcome> {
  if (await isDelivered(deps.pool, order_id)) return "already_delivered";
  const order = await loadOrder(deps, order_id);
  if (order === "refunded") {
    // Refunded before its email went out: its eSIM is cancelled, so there is nothing to install.
    logger.info(`confirmation email not sent for order ${order_id}: refunded`, { order_id });
    return "refunded";
  }
  const email = await renderConfirmationEmail({
    order_id,
    first_name: order.first_name,
    package_name: order.package_name,
    iccid: order.iccid,
    smdp_address: order.smdp_address,
    activation_code: order.activation_code,
    start_date: order.start_date,
  });
  const outcome = await inTransaction(deps.pool, async (client) => {
    await lockOrderEmail(client, order_id);
    if (await isDelivered(client, order_id)) return "already_delivered" as const;
    // The one window this cannot close: the relay accepts the message and this process dies (or
    // the commit fails) before the commit below. The retry then sends again, with the same
    // Message-ID, which mail clients and many relays use to drop the duplicate.
    const { message_id } = await deps.mailer.send({
      ...email,
      key: `confirmation.${order_id}`,
      to: order.email,
    });
    await client.query(RECORD_DELIVERY_SQL, [order_id, message_id, order.email]);
    return "sent" as const;
  });
  // The end user's email address and phone number are never logged: the order id says enough.
  logger.info(`confirmation email ${outcome} for order ${order_id}`, { order_id });
  return outcome;
}

function parsePayload(payload: unknown): ConfirmationEmailPayload {
  const order_id = (payload as { order_id?: unknown } | null)?.order_id;
  if (typeof order_id !== "string") throw new Error("payload must be {order_id: string}");
  assertOrderId(order_id);
  return { order_id };
}

// Order ids become part of a Message-ID, a file name and a job key: letters, digits, - and _ only.
function assertOrderId(order_id: string): void {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(order_id)) throw new Error("order_id must be 1-64 of [A-Za-z0-9_-]");
}

// The job is added in the transaction that completes a new-eSIM order, so anything else here is
// a bug. It throws rather than dropping the job: a failing job keeps its last_error in
// graphile_worker's jobs, where an operator sees it, instead of an email silently never sent.
async function loadOrder(
  deps: SendConfirmationEmailDeps,
  order_id: string,
): Promise<LoadedOrder | "refunded"> {
  const row = await deps.findOrder(order_id);
  if (!row) throw new Error(`order ${order_id} not found`);
  if (row.type !== "esim") throw new Error(`order ${order_id} is a ${row.type} order, not esim`);
  if (row.status === "refunded") return "refunded";
  if (row.status !== "completed") throw new Error(`order ${order_id} is ${row.status}, not completed`);
  const { iccid, smdp_address, activation_code, package_name } = row;
  if (iccid === null || smdp_address === null || activation_code === null || package_name === null) {
    throw new Error(`order ${order_id} has no purchase at position 0`);
  }
  return { ...row, iccid, smdp_address, activation_code, package_name };
}

async function lockOrderEmail(client: pg.PoolClient, order_id: string): Promise<void> {
  const { rows } = await client.query<{ locked: boolean }>(TRY_LOCK_SQL, [order_id]);
  // Another job is sending this order's email right now: retry shortly (graphile-worker's backoff)
  // rather than hold a connection waiting; the retry will find the delivery recorded.
  if (!rows[0]?.locked)
    throw new Error(`confirmation email for order ${order_id} is being sent by another job`);
}

async function isDelivered(client: pg.Pool | pg.PoolClient, order_id: string): Promise<boolean> {
  const { rows } = await client.query<{ delivered: boolean }>(DELIVERED_SQL, [order_id]);
  return rows[0]?.delivered === true;
}

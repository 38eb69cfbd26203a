// Phase 1 of every order (design.md steps 1): the order row as pending, leased to the request
// creating it, and its resolver job, in the caller's transaction, which also holds the funds.
// The job is added in the same transaction: it exists if and only if the order does.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { leaseMs } from "./drive-order.ts";
import type { NewOrder, OrderRow } from "./order.ts";
import { addResolveJob, insertPendingOrder, orderById } from "./orders.sql.ts";

/** Inserts the order as pending with its resolver job and returns it as stored. */
export async function createPendingOrder(
  ctx: AppContext,
  trx: Transaction<Database>,
  order: NewOrder,
): Promise<OrderRow> {
  await insertPendingOrder(trx, order, leaseMs(ctx));
  await addResolveJob(trx, order.order_id, ctx.config.resolve_after_ms);
  const created = await orderById(trx, order.order_id);
  assert.ok(created, "the order inserted in this transaction exists");
  return created;
}

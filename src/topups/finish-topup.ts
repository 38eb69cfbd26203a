// The finishing step of a top-up order (orders/finish.ts): when the order reaches a final state,
// the Idempotency-Key that created it, if any, stores the outcome's exact bytes in the same
// transaction. A replay with the key is then byte for byte what the first attempt answered or
// would have. Handed to the order driver by submit-topup.ts and, through the server, the resolver.
import type { Transaction } from "kysely";
import { deferWrite } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";
import type { OrderFinish } from "../orders/finish.ts";
import type { OrderRow, PurchaseEntry } from "../orders/order.ts";
import { outcomeOf } from "../orders/stored-outcome.ts";
import { completeKeyOfOrder, lockRunningKeyOfOrder } from "./idempotency-keys.sql.ts";

/**
 * A failed order's body names the request that first sent the key (its problem+json `instance`):
 * the key is locked and read for it. A completed order's body has no per-request field, so it is
 * stored in one statement, from the order and purchase the completion just returned.
 */
async function storeOutcomeOnKey(
  trx: Transaction<Database>,
  order: OrderRow & { purchases?: PurchaseEntry[] },
  ttl_hours: number,
): Promise<void> {
  let request_id = "";
  if (order.status !== "completed") {
    const key = await lockRunningKeyOfOrder(trx, order.order_id);
    if (!key) return;
    request_id = key.request_id;
  }
  const outcome = await outcomeOf(trx, order, request_id);
  if (!outcome) return;
  // Sent with the COMMIT: nothing after it reads what it wrote (deferWrite).
  await deferWrite(() => completeKeyOfOrder(trx, order.order_id, outcome, ttl_hours));
}

/** The key keeps a final outcome at least `ttl_hours` (IDEMPOTENCY_TTL_HOURS) from when it is stored. */
export function finishTopUp(ttl_hours: number): OrderFinish {
  const store = (trx: Transaction<Database>, order: OrderRow) => storeOutcomeOnKey(trx, order, ttl_hours);
  return { confirmation_email: false, completed: store, failed: store };
}

// The finishing step of a top-up order (orders/finish.ts): when the order reaches a final state,
// the Idempotency-Key that created it, if any, stores the outcome's exact bytes in the same
// transaction. A replay with the key is then byte for byte what the first attempt answered or
// would have. Handed to the order driver by submit-topup.ts and, through the server, the resolver.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import type { OrderFinish } from "../orders/finish.ts";
import { currentOutcome } from "../orders/stored-outcome.ts";
import { completeKeyOfOrder, lockRunningKeyOfOrder } from "./idempotency-keys.sql.ts";

async function storeOutcomeOnKey(
  trx: Transaction<Database>,
  order_id: string,
  ttl_hours: number,
): Promise<void> {
  const key = await lockRunningKeyOfOrder(trx, order_id);
  if (!key) return;
  const outcome = await currentOutcome(trx, order_id, key.request_id);
  if (!outcome) return;
  await completeKeyOfOrder(trx, order_id, outcome, ttl_hours);
}

/** The key keeps a final outcome at least `ttl_hours` (IDEMPOTENCY_TTL_HOURS) from when it is stored. */
export function finishTopUp(ttl_hours: number): OrderFinish {
  const store = (trx: Transaction<Database>, order_id: string) => storeOutcomeOnKey(trx, order_id, ttl_hours);
  return { completed: store, failed: store };
}

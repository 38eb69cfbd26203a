// The per-type steps of an order's final transaction. The order driver (drive-order.ts) marks
// the order completed or failed, records the purchase and settles the hold; what else must
// commit with that outcome belongs to whoever created the order, and is handed in: a new eSIM
// queues its confirmation email (the outbox row the completing statement inserts, notifications/
// send-confirmation-emails.ts), a top-up stores the outcome on the Idempotency-Key that created
// it (topups/finish-topup.ts). Each step runs only on the one transition that finishes the
// order, so it happens exactly once however many drivers race.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import type { OrderRow, PurchaseEntry } from "./order.ts";

export type OrderFinish = {
  /** Whether completing the order queues the end user's confirmation email (same statement). */
  confirmation_email: boolean;
  /** In the completion transaction, after the purchase is recorded and the hold posted. */
  completed(trx: Transaction<Database>, order: OrderRow & { purchases: PurchaseEntry[] }): Promise<void>;
  /** In the failure transaction, after the hold is voided. */
  failed(trx: Transaction<Database>, order: OrderRow): Promise<void>;
};

/** The finishing steps of each order type: what the resolver, which drives any order, is given. */
export type FinishByType = Record<OrderRow["type"], OrderFinish>;

/** A new eSIM: the confirmation email, on completion only (spec section 6). */
export const FINISH_ESIM: OrderFinish = {
  confirmation_email: true,
  completed: async () => undefined,
  failed: async () => undefined,
};

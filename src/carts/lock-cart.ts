// The submit of a cart (orders/submit-order.ts) starts here: the partner's cart, locked, so
// concurrent submits of one cart serialize on its row until their transaction ends.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { type LockedCart, selectCartForUpdate } from "./carts.sql.ts";

export type { LockedCart };

/** The partner's cart, locked; null for an unknown cart or another partner's. */
export async function lockCart(
  trx: Transaction<Database>,
  cart_key: string,
  partner_id: string,
): Promise<LockedCart | null> {
  return selectCartForUpdate(trx, cart_key, partner_id);
}

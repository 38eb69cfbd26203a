// A submit whose cart row is not there: either the key was never this partner's (404), or the
// cart lapsed and the hourly purge deleted it (410, as for any expired cart: the contract's answer
// must not change because a job ran). Only this rare path pays for the tombstone lookup.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { wasPurgedAfterExpiry } from "./carts.sql.ts";

export const CART_EXPIRED_DETAIL = "The cart expired; create a new one. Nothing was charged.";

export async function missingCartError(
  trx: Transaction<Database>,
  cart_key: string,
  partner_id: string,
): Promise<ApiError> {
  if (await wasPurgedAfterExpiry(trx, cart_key, partner_id)) {
    return new ApiError("cart_expired", CART_EXPIRED_DETAIL);
  }
  return new ApiError("cart_not_found", "No such cart for this partner.");
}

// Partner use case: turn the low-balance alert on (a threshold) or off (null).
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { setWalletThreshold, type WalletBalance } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";
import { getWalletBalance } from "./get-wallet-balance.ts";

export async function setLowBalanceAlert(
  db: Kysely<Database>,
  partner_id: string,
  threshold_minor: number | null,
): Promise<WalletBalance> {
  // Setting it never records an event: the alert fires on a crossing, not on the level.
  if (!(await setWalletThreshold(db, partner_id, threshold_minor))) {
    throw new ApiError("internal_error", "wallet missing");
  }
  return getWalletBalance(db, partner_id);
}

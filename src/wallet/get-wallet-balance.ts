// Partner use case: the wallet balance (GET /v1/profile/wallet).
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { type WalletBalance, walletOf } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";

export async function getWalletBalance(db: Kysely<Database>, partner_id: string): Promise<WalletBalance> {
  const wallet = await walletOf(db, partner_id);
  // Every partner is created with a wallet; a missing one is a broken invariant, not a 404.
  if (!wallet) throw new ApiError("internal_error", "wallet missing");
  return wallet;
}

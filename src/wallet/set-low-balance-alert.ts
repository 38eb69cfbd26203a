// Partner use case: turn the low-balance alert on (a threshold) or off (null).
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { setWalletThreshold, type WalletBalance, walletOf } from "../ledger/accounts.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { getWalletBalance } from "./get-wallet-balance.ts";

export async function setLowBalanceAlert(
  db: Kysely<Database>,
  partner_id: string,
  threshold_minor: number | null,
  actor: Actor,
): Promise<WalletBalance> {
  // Setting it never records an event (the alert fires on a crossing, not on the level), but the
  // audit log says who moved the level.
  await db.transaction().execute(async (trx) => {
    const wallet = await walletOf(trx, partner_id, true);
    if (!wallet) throw new ApiError("internal_error", "wallet missing");
    // The same level again changes nothing, and the log says nothing of it.
    if (wallet.low_balance_threshold_minor === threshold_minor) return;
    if (!(await setWalletThreshold(trx, partner_id, threshold_minor))) {
      throw new ApiError("internal_error", "wallet missing");
    }
    await recordAudit(trx, {
      actor,
      action: "wallet.low_balance_alert_set",
      partner_id,
      target: { type: "wallet", id: partner_id },
      details: { threshold_minor },
    });
  });
  return getWalletBalance(db, partner_id);
}

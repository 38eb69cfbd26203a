// The low-balance alert (contract: "Wallet additions"): one wallet.balance_low event each time a
// purchase's hold takes the available balance from at or above the partner's threshold to below
// it. The ledger detects the crossing in the hold's own UPDATE (src/ledger/transfers.ts); the
// purchase's domain calls this in the same transaction, so the event exists iff the hold does.
// Spending more while below does not cross again; a credit back above it re-arms the alert.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { recordEventLater } from "../events/record-event.ts";
import type { Hold } from "../ledger/transfers.ts";
import { money } from "../shared/schemas.ts";

export async function recordBalanceLow(
  trx: Transaction<Database>,
  partner_id: string,
  hold: Hold,
): Promise<void> {
  if (hold.crossed === null) return;
  const { balance_minor, threshold_minor, currency } = hold.crossed;
  await recordEventLater(trx, {
    partner_id,
    type: "wallet.balance_low",
    data: { balance: money(balance_minor, currency), threshold: money(threshold_minor, currency) },
  });
}

// Operator use case: credit a partner's prepaid wallet (a bank transfer arrived).
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { WalletBalance } from "../ledger/accounts.ts";
import { creditWallet as creditLedger } from "../ledger/transfers.ts";
import { ApiError } from "../shared/errors.ts";

export async function creditWallet(
  db: Kysely<Database>,
  input: { partner_id: string; amount_minor: number; reference: string },
): Promise<{ balance: WalletBalance; credited: boolean }> {
  const outcome = await db
    .transaction()
    .execute((trx) => creditLedger(trx, input.partner_id, input.amount_minor, input.reference));
  if (outcome === null) throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
  if (outcome.kind === "reference_conflict") {
    throw new ApiError(
      "credit_reference_reused",
      `Reference ${input.reference} already credited ${outcome.existing_amount_minor} minor units; a reference credits once.`,
    );
  }
  return { balance: outcome.balance, credited: outcome.kind === "credited" };
}

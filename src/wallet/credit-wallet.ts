// Operator use case: credit a partner's prepaid wallet (a bank transfer arrived).
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { recordEvent } from "../events/record-event.ts";
import type { WalletBalance } from "../ledger/accounts.ts";
import { creditWallet as creditLedger } from "../ledger/transfers.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { money } from "../shared/schemas.ts";

export async function creditWallet(
  db: Kysely<Database>,
  input: { partner_id: string; amount_minor: number; reference: string },
  actor: Actor,
): Promise<{ balance: WalletBalance; credited: boolean }> {
  const outcome = await db.transaction().execute(async (trx) => {
    const credit = await creditLedger(trx, input.partner_id, input.amount_minor, input.reference);
    // The event and the audit entry in the credit's transaction; a repeated reference credits
    // nothing and says nothing, so a replayed credit is in the audit log once.
    if (credit?.kind === "credited") {
      const currency = credit.balance.currency;
      await recordAudit(trx, {
        actor,
        action: "wallet.credited",
        partner_id: input.partner_id,
        target: { type: "wallet", id: input.partner_id },
        details: { amount: money(input.amount_minor, currency), reference: input.reference },
      });
      await recordEvent(trx, {
        partner_id: input.partner_id,
        type: "wallet.credited",
        data: {
          balance: money(credit.balance.available_minor, currency),
          // The contract's wallet events carry {balance, threshold}: the alert level, or null when off.
          threshold:
            credit.balance.low_balance_threshold_minor === null
              ? null
              : money(credit.balance.low_balance_threshold_minor, currency),
          amount: money(input.amount_minor, currency),
          reference: input.reference,
        },
      });
    }
    return credit;
  });
  if (outcome === null) throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
  if (outcome.kind === "reference_conflict") {
    throw new ApiError(
      "credit_reference_reused",
      `Reference ${input.reference} already credited ${outcome.existing_amount_minor} minor units; a reference credits once.`,
    );
  }
  return { balance: outcome.balance, credited: outcome.kind === "credited" };
}

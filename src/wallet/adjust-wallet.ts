// Operator use case: correct a partner's wallet (issue 32, finance), either sign, with a reason,
// posted at once. A credit adjustment is not a credit (no payment arrived): it emits no
// wallet.credited event; a debit that takes the balance below the partner's alert level emits
// wallet.balance_low, as a purchase's hold does. The partner sees the row in its statement as type
// `adjustment`, the reason as its description (the operator writes it for the partner to read).
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { type StatementRow, walletStatementRow } from "../ledger/accounts.ts";
import { adjustWallet as adjustLedger } from "../ledger/transfers.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { checkOneLine, money } from "../shared/schemas.ts";
import { partnerWallet, renderTransactions, type Transaction } from "./list-transactions.ts";
import { recordBalanceLow } from "./record-balance-low.ts";

export type AdjustmentInput = { partner_id: string; amount_minor: number; reason: string; reference: string };

/** The input as the ledger takes it: a non-zero amount, the reason trimmed (shared/schemas.ts's rule). */
function checkedAdjustment(input: AdjustmentInput): AdjustmentInput {
  if (input.amount_minor === 0) {
    throw new ApiError("invalid_request", "amount_minor must not be 0: positive adds, negative takes.", {
      errors: [{ field: "amount_minor", code: "not_allowed", message: "must not be 0" }],
    });
  }
  return { ...input, reason: checkOneLine("reason", input.reason) };
}

/** Posts the adjustment with its audit entry and low-balance alert, in one transaction. */
function postAdjustment(db: Kysely<Database>, input: AdjustmentInput, actor: Actor) {
  return db.transaction().execute(async (trx) => {
    const result = await adjustLedger(trx, input.partner_id, {
      signed_minor: input.amount_minor,
      reference: input.reference,
      reason: input.reason,
    });
    if (result?.kind !== "adjusted") return result;
    // The audit entry and the alert in the adjustment's transaction; a replay writes neither.
    await recordAudit(trx, {
      actor,
      action: "wallet.adjusted",
      partner_id: input.partner_id,
      target: { type: "wallet", id: input.partner_id },
      details: {
        amount: money(input.amount_minor, result.balance.currency),
        reference: input.reference,
        reason: input.reason,
        transaction_id: result.transfer_id,
      },
    });
    await recordBalanceLow(trx, input.partner_id, {
      available_minor: result.balance.available_minor,
      crossed: result.crossed,
    });
    return result;
  });
}

type Posted = Awaited<ReturnType<typeof postAdjustment>>;

/** The transfer the adjustment posted (or replayed), or the refusal as the API answers it. */
function postedTransfer(input: AdjustmentInput, outcome: Posted): { transfer_id: string; adjusted: boolean } {
  if (outcome === null) throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
  if (outcome.kind === "reference_conflict") {
    throw new ApiError(
      "adjustment_reference_reused",
      `Reference ${input.reference} already adjusted this wallet by ${outcome.existing_signed_minor} minor units; a reference adjusts once.`,
    );
  }
  if (outcome.kind === "insufficient_balance") {
    throw new ApiError(
      "insufficient_balance",
      `The available balance (${outcome.balance.available_minor} minor units, holds deducted) does not cover a debit of ${-input.amount_minor}.`,
    );
  }
  return { transfer_id: outcome.transfer_id, adjusted: outcome.kind === "adjusted" };
}

export async function adjustWallet(
  db: Kysely<Database>,
  given: AdjustmentInput,
  actor: Actor,
): Promise<{ transaction: Transaction; adjusted: boolean }> {
  const input = checkedAdjustment(given);
  const { transfer_id, adjusted } = postedTransfer(input, await postAdjustment(db, input, actor));
  const row = await adjustmentRow(db, input.partner_id, transfer_id);
  const [transaction] = await renderTransactions(db, [row]);
  return { transaction: transaction!, adjusted };
}

async function adjustmentRow(
  db: Kysely<Database>,
  partner_id: string,
  transfer_id: string,
): Promise<StatementRow> {
  const wallet = await partnerWallet(db, partner_id);
  const row = await walletStatementRow(db, wallet.account_id, transfer_id);
  if (!row) throw new Error(`adjustment ${transfer_id} is not on ${partner_id}'s statement`);
  return row;
}

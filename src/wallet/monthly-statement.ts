// A month of the wallet (issue 32, finance): GET /v1/profile/wallet/statements/{YYYY-MM} and the
// operator's per partner. A transfer belongs to the month it was posted in (UTC). The opening
// balance is the signed sum of the wallet's transfers posted before the month; the totals are the
// month's transfers by type, signed as they move the wallet; the closing balance is opening plus
// the totals, so opening + credits + purchases + topups + refunds + adjustments = closing by
// construction. test/wallet.monthly-statements.test.ts proves against the ledger that the closing
// balance is the settled balance at the month's end (and now, for the month under way), and that
// each month opens where the one before closed.
import assert from "node:assert/strict";
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import type { Database } from "../db/schema.ts";
import { walletBalanceBefore, walletStatementSize } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";
import { Money, money } from "../shared/schemas.ts";
import { MAX_CSV_ROWS } from "./export-transactions.ts";
import {
  partnerWallet,
  renderStatementLines,
  type StatementLine,
  statementPage,
  type Transaction,
} from "./list-transactions.ts";

/** Transactions one PDF statement lists at most (about 250 pages). */
export const MAX_PDF_ROWS = 10_000;

/** Rows read per page while summing a month: memory stays one page whatever the month's size. */
const PAGE_ROWS = 500;

export const MONTH_PATTERN = "^[0-9]{4}-(0[1-9]|1[0-2])$";

const Total = (description: string) =>
  Type.Object(Money.properties, { additionalProperties: false, description });

export const MonthlyStatement = Type.Object(
  {
    month: Type.String({ pattern: MONTH_PATTERN, description: "The month, YYYY-MM (UTC)." }),
    opening_balance: Total("The settled balance at the month's first instant (UTC)."),
    closing_balance: Total(
      "The settled balance at the next month's first instant, or now for the month under way: opening plus the five totals.",
    ),
    credits: Total("Credits into the wallet (positive)."),
    purchases: Total("Confirmed eSIM purchases (negative)."),
    topups: Total("Confirmed top-ups (negative)."),
    refunds: Total("Refunds back into the wallet (positive)."),
    adjustments: Total("The operator's corrections, both signs."),
  },
  { additionalProperties: false },
);
export type MonthlyStatement = Static<typeof MonthlyStatement>;

export type MonthWindow = { month: string; from: Date; until: Date };

/** The month's instants [from, until), refused (400) when malformed or not begun yet. */
export function monthWindow(month: string, now = new Date()): MonthWindow {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  const year = Number(match?.[1]);
  const index = Number(match?.[2]) - 1;
  if (!match || index < 0 || index > 11 || year < 2000) {
    throw new ApiError("invalid_request", "month must be a month such as 2026-03.", {
      errors: [{ field: "month", code: "invalid_format", message: "must be a month such as 2026-03" }],
    });
  }
  const from = new Date(Date.UTC(year, index, 1));
  if (from > now) {
    throw new ApiError("invalid_request", `${month} has not begun yet.`, {
      errors: [{ field: "month", code: "out_of_range", message: "has not begun yet" }],
    });
  }
  return { month, from, until: new Date(Date.UTC(year, index + 1, 1)) };
}

type Totals = Record<"credits" | "purchases" | "topups" | "refunds" | "adjustments", number>;

const TOTAL_OF: Record<Transaction["type"], keyof Totals> = {
  credit: "credits",
  purchase: "purchases",
  topup: "topups",
  refund: "refunds",
  adjustment: "adjustments",
};

function add(totals: Totals, t: Transaction): void {
  totals[TOTAL_OF[t.type]] += t.amount.amount_minor;
}

/**
 * The month's totals, and its transactions oldest first when `with_rows` (the PDF lists them). More
 * than MAX_CSV_ROWS in one month: 422 statement_too_large, like a CSV export of that size.
 */
export async function monthlyStatement(
  db: Kysely<Database>,
  input: { partner_id: string; month: string; with_rows?: boolean },
): Promise<{ statement: MonthlyStatement; transactions: StatementLine[] }> {
  const window = monthWindow(input.month);
  const wallet = await partnerWallet(db, input.partner_id);
  const query = { account_id: wallet.account_id, from: window.from, until: window.until };
  // A PDF holds every row in memory and is drawn on the event loop: it takes fewer.
  const cap = input.with_rows ? MAX_PDF_ROWS : MAX_CSV_ROWS;
  const size = await walletStatementSize(db, { ...query, before_seq: null }, cap + 1);
  if (size > cap) {
    const what = input.with_rows
      ? "a PDF statement holds; use the CSV export (from/to)"
      : "a statement holds";
    throw new ApiError(
      "statement_too_large",
      `More than ${cap} transactions in ${input.month}, more than ${what}.`,
    );
  }
  const opening = await walletBalanceBefore(db, wallet.account_id, window.from);
  const totals: Totals = { credits: 0, purchases: 0, topups: 0, refunds: 0, adjustments: 0 };
  const transactions: StatementLine[] = [];
  let before_seq: number | null = null;
  do {
    const page = await statementPage(db, { ...query, before_seq, limit: PAGE_ROWS });
    const rendered = await renderStatementLines(db, page.rows);
    for (const t of rendered) add(totals, t);
    if (input.with_rows) transactions.push(...rendered);
    before_seq = page.next_seq;
  } while (before_seq !== null);
  const closing = opening + Object.values(totals).reduce((sum, v) => sum + v, 0);
  assert.ok(Number.isSafeInteger(closing), "a balance in minor units");
  const currency = wallet.currency;
  return {
    statement: {
      month: input.month,
      opening_balance: money(opening, currency),
      closing_balance: money(closing, currency),
      credits: money(totals.credits, currency),
      purchases: money(totals.purchases, currency),
      topups: money(totals.topups, currency),
      refunds: money(totals.refunds, currency),
      adjustments: money(totals.adjustments, currency),
    },
    transactions: transactions.reverse(),
  };
}

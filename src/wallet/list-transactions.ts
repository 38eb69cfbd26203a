// Partner use case: the wallet's statement (GET /v1/profile/wallet/transactions). Settled money
// only: posted transfers, newest first, each with the settled balance it left (derived from the
// ledger in posted order, migration 0006). Holds are not in it until the carrier confirms.
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import type { Database } from "../db/schema.ts";
import {
  type StatementQuery,
  type StatementRow,
  type WalletRow,
  walletOf,
  walletStatementPage,
} from "../ledger/accounts.ts";
import { type OrderStatementFacts, orderStatementFacts } from "../orders/order-totals.ts";
import { type DayRange, dayWindow } from "../shared/day-range.ts";
import { ApiError, type FieldErrorCode } from "../shared/errors.ts";
import { Money, money } from "../shared/schemas.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

export const Transaction = Type.Object(
  {
    transaction_id: Type.String({ description: "The ledger transfer (`trf_…`)." }),
    type: Type.Union([
      Type.Literal("credit"),
      Type.Literal("purchase"),
      Type.Literal("topup"),
      Type.Literal("refund"),
      Type.Literal("adjustment"),
    ]),
    amount: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "Negative when the money left the wallet.",
    }),
    balance_after: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "The settled balance (credits minus confirmed purchases) right after this row.",
    }),
    order_id: Type.Union([Type.String(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()], {
      description:
        "The operator's payment reference of a credit, or its reference of an adjustment; null otherwise.",
    }),
    description: Type.Union([Type.String(), Type.Null()], {
      description: "An adjustment's reason, as the operator wrote it for you; null on every other type.",
    }),
    created_at: Type.String({ format: "date-time", description: "When the money moved (was posted)." }),
  },
  { additionalProperties: false },
);
export type Transaction = Static<typeof Transaction>;

export const TransactionPage = Type.Object(
  {
    data: Type.Array(Transaction),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);
export type TransactionPage = Static<typeof TransactionPage>;

/** `from` and `to` are UTC days, both included, read as every list reads them (shared/day-range.ts). */
export type StatementRange = DayRange;

function invalid(field: string, message: string, code: FieldErrorCode = "invalid_format"): ApiError {
  return new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
}

// The cursor is the posted_seq of the last row on the page, wrapped so clients treat it as opaque.
function encodeCursor(seq: number): string {
  return Buffer.from(`w1:${seq}`).toString("base64url");
}

function decodeCursor(cursor: string): number {
  const match = /^w1:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw invalid("cursor", "is not a valid cursor");
  return Number(match[1]);
}

export async function partnerWallet(db: Kysely<Database>, partner_id: string): Promise<WalletRow> {
  const wallet = await walletOf(db, partner_id);
  if (!wallet) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
  return wallet;
}

/** A statement row with what its order was for: the CSV's and the PDF's columns beyond the JSON's. */
export type StatementLine = Transaction &
  Pick<OrderStatementFacts, "client_reference" | "iccid"> & {
    package_id: string | null;
  };

function typeOf(row: StatementRow, order: OrderStatementFacts | undefined): Transaction["type"] {
  if (row.kind === "wallet_credit") return "credit";
  if (row.kind === "refund" || row.kind === "adjustment") return row.kind;
  return order?.type === "topup" ? "topup" : "purchase";
}

/** Statement rows with their orders' facts, read in one query per page. */
export async function renderStatementLines(
  db: Kysely<Database>,
  rows: StatementRow[],
): Promise<StatementLine[]> {
  const orders = await orderStatementFacts(
    db,
    rows.filter((row) => row.kind === "purchase" || row.kind === "refund").map((row) => row.reference),
  );
  return rows.map((row) => {
    const of_order = row.kind === "purchase" || row.kind === "refund";
    const order = of_order ? orders.get(row.reference) : undefined;
    return {
      transaction_id: row.transfer_id,
      type: typeOf(row, order),
      amount: money(row.signed_minor, row.currency),
      balance_after: money(row.balance_after_minor, row.currency),
      order_id: of_order ? row.reference : null,
      reference: of_order ? null : row.reference,
      description: row.kind === "adjustment" ? row.reason : null,
      created_at: row.posted_at.toISOString(),
      client_reference: order?.client_reference ?? null,
      iccid: order?.iccid ?? null,
      package_id: order?.package_id ?? null,
    };
  });
}

/** Statement rows as the API's Transaction (the JSON list and the adjustment route's answer). */
export async function renderTransactions(db: Kysely<Database>, rows: StatementRow[]): Promise<Transaction[]> {
  const lines = await renderStatementLines(db, rows);
  return lines.map(({ client_reference: _c, iccid: _i, package_id: _p, ...transaction }) => transaction);
}

/** One page of rows (newest first) and the seq to continue below, or null at the end. */
export async function statementPage(
  db: Kysely<Database>,
  query: StatementQuery,
): Promise<{ rows: StatementRow[]; next_seq: number | null }> {
  // One extra row tells whether another page exists, without a count.
  const rows = await walletStatementPage(db, { ...query, limit: query.limit + 1 });
  const page = rows.slice(0, query.limit);
  return { rows: page, next_seq: rows.length > query.limit ? page.at(-1)!.posted_seq : null };
}

export async function listTransactions(
  db: Kysely<Database>,
  input: StatementRange & { partner_id: string; limit: number; cursor: string | null },
): Promise<TransactionPage> {
  // The route's schema (pageParameters) already bounds it; a caller past the bound is a bug.
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_PAGE_SIZE) {
    throw new Error(`listTransactions: limit ${input.limit} outside 1-${MAX_PAGE_SIZE}`);
  }
  const window = dayWindow(input);
  const before_seq = input.cursor === null ? null : decodeCursor(input.cursor);
  const wallet = await partnerWallet(db, input.partner_id);
  const { rows, next_seq } = await statementPage(db, {
    account_id: wallet.account_id,
    before_seq,
    ...window,
    limit: input.limit,
  });
  return {
    data: await renderTransactions(db, rows),
    has_more: next_seq !== null,
    next_cursor: next_seq === null ? null : encodeCursor(next_seq),
  };
}

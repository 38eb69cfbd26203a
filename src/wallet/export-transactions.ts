// The statement as CSV (GET /v1/profile/wallet/transactions with Accept: text/csv, the console and
// the operator CLI): every row of the range at once, oldest first (a ledger reads top to bottom,
// each row's balance_after the one above plus its amount), streamed page by page so memory
// stays one page whatever the size. Over MAX_CSV_ROWS the export is refused before the first
// byte (422 statement_too_large) rather than cut short: a truncated statement would look complete.
import type { ServerResponse } from "node:http";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { walletStatementPageOldestFirst, walletStatementSize } from "../ledger/accounts.ts";
import { majorUnits } from "../lib/major-units.ts";
import { dayWindow } from "../shared/day-range.ts";
import { ApiError } from "../shared/errors.ts";
import type { KeyedSlots } from "../shared/keyed-slots.ts";
import {
  partnerWallet,
  renderStatementLines,
  type StatementLine,
  type StatementRange,
  statementPage,
} from "./list-transactions.ts";

export const MAX_CSV_ROWS = 100_000;
/** What a refused export is told to wait: the largest takes seconds, a small one far less. */
const EXPORT_RETRY_AFTER_S = 5;
/** Rows read per statement while streaming: memory stays this much whatever the export's size. */
const EXPORT_PAGE_ROWS = 500;

export const CSV_COLUMNS = [
  "transaction_id",
  "type",
  "amount",
  "amount_minor",
  "currency",
  "balance_after_minor",
  "order_id",
  "reference",
  "client_reference",
  "iccid",
  "package_id",
  "description",
  "created_at",
] as const;

/** A number written as text (an amount in major units): never neutralised, as numbers are not. */
type Numeric = { numeric: string };

type Cell = string | number | null | Numeric;

/**
 * RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. A text field
 * that a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab, CR first: a payer-typed credit
 * reference such as `=HYPERLINK(…)`) gets a leading `'` (OWASP's CSV injection advice); numbers,
 * negative amounts included, are written as they are.
 */
function field(value: Cell): string {
  if (typeof value === "object" && value !== null) return value.numeric;
  let text = value === null ? "" : String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: ReadonlyArray<Cell>): string {
  return `${values.map(field).join(",")}\r\n`;
}

export function transactionLine(t: StatementLine): string {
  return csvLine([
    t.transaction_id,
    t.type,
    { numeric: majorUnits(t.amount.amount_minor, t.amount.currency) },
    t.amount.amount_minor,
    t.amount.currency,
    t.balance_after.amount_minor,
    t.order_id,
    t.reference,
    t.client_reference,
    t.iccid,
    t.package_id,
    t.description,
    t.created_at,
  ]);
}

/**
 * Whose download it is. The operator's downloads of a partner's statement have their own slot key,
 * so the operator never takes the partner's slot (its own export would answer 429 meanwhile); both
 * still count against the process's cap, which protects the database.
 */
export type ExportedBy = "partner" | "operator";

/**
 * A slot for one CSV export of the partner's statement (API or console), taken before its first
 * query and given back when `response` closes (sent, failed or dropped by the client). A client that
 * hung up before the handler ran (while its key was looked up) closed the response already, and a
 * listener added then would never run: the slot is given back at once and nothing is read (a slot
 * kept forever stopped the partner's exports, and four stopped every partner's).
 * An export reads up to 100,000 rows over many queries: 40 at once slowed every other partner's
 * reads tenfold. Over CSV_EXPORTS_PER_PARTNER or CSV_EXPORTS_PER_PROCESS: 429 `rate_limited` with
 * Retry-After at once, nothing read (a wait would hold the request, and its client, for nothing).
 */
export function exportSlot(
  slots: KeyedSlots,
  partner_id: string,
  response: ServerResponse,
  by: ExportedBy = "partner",
): void {
  const release = slots.take(by === "operator" ? `operator:${partner_id}` : partner_id);
  if (release === null) {
    throw new ApiError(
      "rate_limited",
      "Too many statement exports at once (yours, or this server's): ask again after Retry-After seconds.",
      { headers: { "retry-after": String(EXPORT_RETRY_AFTER_S) } },
    );
  }
  if (response.destroyed) {
    release();
    throw new ApiError("service_unavailable", "The client closed the request before its export began.");
  }
  response.once("close", release);
}

/**
 * Checks the range (400 on bad dates, 422 over the cap) and returns the statement's rows page by
 * page, oldest first. The checks run before the caller sends anything, so a refusal is a plain
 * problem response.
 */
export async function statementTransactions(
  db: Kysely<Database>,
  input: StatementRange & { partner_id: string },
): Promise<AsyncGenerator<StatementLine[]>> {
  const window = dayWindow(input);
  const wallet = await partnerWallet(db, input.partner_id);
  const query = { account_id: wallet.account_id, ...window };
  // The export is the statement as of its newest row now: later postings are not in it (each row's
  // place in posted_seq is final), so the count below is exactly what will be sent, and the pages
  // read oldest first stop at that row.
  const newest =
    (await statementPage(db, { ...query, before_seq: null, limit: 1 })).rows[0]?.posted_seq ?? null;
  if (newest === null) return (async function* () {})();
  const size = await walletStatementSize(db, { ...query, before_seq: newest + 1 }, MAX_CSV_ROWS + 1);
  if (size > MAX_CSV_ROWS) {
    throw new ApiError(
      "statement_too_large",
      `More than ${MAX_CSV_ROWS} transactions in this range; export it in narrower from/to ranges.`,
    );
  }
  return (async function* () {
    let after_seq: number | null = null;
    for (;;) {
      const rows = await walletStatementPageOldestFirst(db, { ...query, after_seq, limit: EXPORT_PAGE_ROWS });
      const page = rows.filter((row) => row.posted_seq <= newest);
      if (page.length > 0) yield await renderStatementLines(db, page);
      if (page.length < EXPORT_PAGE_ROWS) return;
      after_seq = page.at(-1)!.posted_seq;
    }
  })();
}

/** The statement as CSV chunks, the header first (see statementTransactions for the checks). */
export async function exportTransactions(
  db: Kysely<Database>,
  input: StatementRange & { partner_id: string },
): Promise<AsyncGenerator<string>> {
  const pages = await statementTransactions(db, input);
  return (async function* () {
    yield csvLine(CSV_COLUMNS);
    for await (const page of pages) yield page.map(transactionLine).join("");
  })();
}

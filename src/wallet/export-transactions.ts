// The statement as CSV (GET /v1/profile/wallet/transactions with Accept: text/csv, and the
// operator CLI): every row of the range at once, newest first, streamed page by page so memory
// stays one page whatever the size. Over MAX_CSV_ROWS the export is refused before the first
// byte (422 statement_too_large) rather than cut short: a truncated statement would look complete.
import type { ServerResponse } from "node:http";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { walletStatementSize } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";
import type { KeyedSlots } from "../shared/keyed-slots.ts";
import {
  partnerWallet,
  renderTransactions,
  type StatementRange,
  statementPage,
  statementWindow,
  type Transaction,
} from "./list-transactions.ts";

export const MAX_CSV_ROWS = 100_000;
/** What a refused export is told to wait: the largest takes seconds, a small one far less. */
const EXPORT_RETRY_AFTER_S = 5;
/** Rows read per statement while streaming: memory stays this much whatever the export's size. */
const EXPORT_PAGE_ROWS = 500;

export const CSV_COLUMNS = [
  "transaction_id",
  "type",
  "amount_minor",
  "currency",
  "balance_after_minor",
  "order_id",
  "reference",
  "created_at",
] as const;

/**
 * RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. A text field
 * that a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab, CR first: a payer-typed credit
 * reference such as `=HYPERLINK(…)`) gets a leading `'` (OWASP's CSV injection advice); numbers,
 * negative amounts included, are written as they are.
 */
function field(value: string | number | null): string {
  let text = value === null ? "" : String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: ReadonlyArray<string | number | null>): string {
  return `${values.map(field).join(",")}\r\n`;
}

export function transactionLine(t: Transaction): string {
  return csvLine([
    t.transaction_id,
    t.type,
    t.amount.amount_minor,
    t.amount.currency,
    t.balance_after.amount_minor,
    t.order_id,
    t.reference,
    t.created_at,
  ]);
}

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
export function exportSlot(slots: KeyedSlots, partner_id: string, response: ServerResponse): void {
  const release = slots.take(partner_id);
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
 * page, newest first. The checks run before the caller sends anything, so a refusal is a plain
 * problem response.
 */
export async function statementTransactions(
  db: Kysely<Database>,
  input: StatementRange & { partner_id: string },
): Promise<AsyncGenerator<Transaction[]>> {
  const window = statementWindow(input);
  const wallet = await partnerWallet(db, input.partner_id);
  const query = { account_id: wallet.account_id, ...window };
  const first = await statementPage(db, { ...query, before_seq: null, limit: EXPORT_PAGE_ROWS });
  // The export is the statement as of its newest row now: later postings are not in it (each row's
  // place in posted_seq is final), so the count below is exactly what will be sent.
  const newest = first.rows[0]?.posted_seq ?? null;
  const size =
    newest === null
      ? 0
      : await walletStatementSize(db, { ...query, before_seq: newest + 1 }, MAX_CSV_ROWS + 1);
  if (size > MAX_CSV_ROWS) {
    throw new ApiError(
      "statement_too_large",
      `More than ${MAX_CSV_ROWS} transactions in this range; export it in narrower from/to ranges.`,
    );
  }
  return (async function* () {
    let page = first;
    while (page.rows.length > 0) {
      yield await renderTransactions(db, page.rows);
      if (page.next_seq === null) return;
      page = await statementPage(db, { ...query, before_seq: page.next_seq, limit: EXPORT_PAGE_ROWS });
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

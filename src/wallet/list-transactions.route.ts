// GET /v1/profile/wallet/transactions: the wallet's statement, by pages as JSON or whole as CSV.
import { Readable } from "node:stream";
import { Type } from "typebox";
import { prefersOverJson } from "../shared/accept.ts";
import { DATE_PATTERN } from "../shared/day-range.ts";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY, pageParameters, pageSize } from "../shared/schemas.ts";
import { CSV_COLUMNS, exportSlot, exportTransactions, MAX_CSV_ROWS } from "./export-transactions.ts";
import { DEFAULT_PAGE_SIZE, listTransactions, TransactionPage } from "./list-transactions.ts";

export const listTransactionsRoute = endpoint({
  method: "GET",
  url: "/profile/wallet/transactions",
  schema: {
    operationId: "listWalletTransactions",
    summary: "Your wallet statement, newest first",
    description:
      "Settled money only (credits, confirmed purchases and top-ups, refunds); holds appear once confirmed. " +
      "`balance_after` is the settled balance right after each row, so consecutive rows chain. Pages stay " +
      "stable while new transactions post. With `Accept: text/csv` (a higher q-value than " +
      "application/json's, or on a tie its matching range listed first) every row of the range at once " +
      "(`limit` and `cursor` not used, though `limit` must still be 1-100), header first, columns " +
      `${CSV_COLUMNS.join(", ")}; more than ${MAX_CSV_ROWS} rows: ` +
      "422 `statement_too_large`, nothing sent. At most one CSV export of yours runs at once (and a few per " +
      "server): another is 429 `rate_limited` with `Retry-After` at once, nothing read.",
    tags: ["Wallet"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      {
        ...pageParameters(DEFAULT_PAGE_SIZE),
        from: Type.Optional(
          Type.String({
            format: "date",
            pattern: DATE_PATTERN,
            description: "First UTC day included (YYYY-MM-DD).",
          }),
        ),
        to: Type.Optional(
          Type.String({
            format: "date",
            pattern: DATE_PATTERN,
            description: "Last UTC day included (YYYY-MM-DD).",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    response: {
      200: {
        description: "A page of transactions, or with `Accept: text/csv` all of them.",
        content: {
          "application/json": { schema: TransactionPage },
          "text/csv": { schema: Type.String() },
        },
      },
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "statement_too_large"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const query = request.query;
    const range = { partner_id: request.partner!.partner_id, from: query.from ?? null, to: query.to ?? null };
    // The answer's type depends on Accept: a cache must not serve one type for the other.
    reply.header("vary", "Accept");
    if (prefersOverJson(request.headers.accept, "text/csv")) {
      // Given back when the response closes, whether sent, refused (a bad range) or dropped.
      exportSlot(ctx.csv_exports, range.partner_id, reply.raw);
      const chunks = await exportTransactions(ctx.db, range);
      return reply
        .type("text/csv; charset=utf-8")
        .header("content-disposition", 'attachment; filename="transactions.csv"')
        .send(Readable.from(chunks) as never); // a stream: the schema's text/csv string, sent as it is made
    }
    const page = await listTransactions(ctx.db, {
      ...range,
      limit: pageSize(query.limit, DEFAULT_PAGE_SIZE),
      cursor: query.cursor ?? null,
    });
    return reply.type("application/json; charset=utf-8").send(page);
  },
});

// GET /v1/profile/wallet/statements/{month} and GET /admin/partners/{partner_id}/wallet/statements/{month}:
// a month of the wallet as JSON totals, or with `Accept: application/pdf` as a PDF statement with
// every transaction (issue 32).
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { findPartner } from "../partners/list-partners.ts";
import { prefersOverJson } from "../shared/accept.ts";
import type { AppContext } from "../shared/context.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import {
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  errorResponses,
  PARTNER_SECURITY,
  PrefixedId,
} from "../shared/schemas.ts";
import { type ExportedBy, exportSlot } from "./export-transactions.ts";
import { MONTH_PATTERN, MonthlyStatement, monthlyStatement } from "./monthly-statement.ts";
import { statementPdf } from "./statement-pdf.ts";

const MonthParam = Type.String({ pattern: MONTH_PATTERN, description: "The month, YYYY-MM (UTC)." });

const DESCRIPTION =
  "A transaction belongs to the month it was posted in (UTC). `opening_balance` is the settled balance at the " +
  "month's first instant; the totals are signed as they move the wallet (purchases and top-ups negative); " +
  "`closing_balance` = opening + the five totals, the settled balance at the next month's first instant (now, " +
  "for the month under way). With `Accept: application/pdf` (preferred over application/json) the same month " +
  "as a PDF statement listing every transaction, oldest first. A month not begun yet, or not YYYY-MM: 400. " +
  "More than 100000 transactions in the month (10000 for a PDF): 422 `statement_too_large`. A PDF takes one of the CSV exports' slots: " +
  "past them, 429 `rate_limited` with Retry-After. The operator's downloads of a partner's statement have slots of " +
  "their own: they never take the partner's.";

const responses = {
  200: {
    description: "The month's totals, or with `Accept: application/pdf` the PDF statement.",
    content: {
      "application/json": { schema: MonthlyStatement },
      "application/pdf": { schema: Type.String({ format: "binary" }) },
    },
  },
};

/**
 * The month as a PDF download (the API with Accept: application/pdf, and both consoles' download
 * links). A PDF reads and draws a whole month: it takes one of the statement exports' slots, as a
 * CSV does, given back when the response closes; the operator's, a slot of its own (`by`).
 */
export async function sendMonthlyPdf(
  ctx: AppContext,
  reply: FastifyReply,
  input: { partner_id: string; month: string; by: ExportedBy },
): Promise<FastifyReply> {
  exportSlot(ctx.csv_exports, input.partner_id, reply.raw, input.by);
  const { statement, transactions } = await monthlyStatement(ctx.db, { ...input, with_rows: true });
  const partner = await findPartner(ctx.db, input.partner_id);
  if (!partner) throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
  const bytes = await statementPdf(statement, transactions, partner);
  return reply
    .type("application/pdf")
    .header("content-disposition", `attachment; filename="statement-${input.month}.pdf"`)
    .send(bytes);
}

async function answer(
  ctx: AppContext,
  reply: FastifyReply,
  input: { partner_id: string; month: string; accept: string | undefined; by: ExportedBy },
): Promise<FastifyReply> {
  reply.header("vary", "Accept");
  if (prefersOverJson(input.accept, "application/pdf")) return sendMonthlyPdf(ctx, reply, input);
  const { statement } = await monthlyStatement(ctx.db, input);
  return reply.type("application/json; charset=utf-8").send(statement);
}

export const getMonthlyStatementRoute = endpoint({
  method: "GET",
  url: "/profile/wallet/statements/:month",
  schema: {
    operationId: "getMonthlyStatement",
    summary: "A month of your wallet: opening and closing balance and totals (JSON or PDF)",
    description: DESCRIPTION,
    tags: ["Wallet"],
    security: PARTNER_SECURITY,
    params: Type.Object({ month: MonthParam }),
    response: {
      ...responses,
      ...errorResponses(
        "invalid_request",
        "unauthorized",
        "wrong_environment",
        "ip_not_allowed",
        "statement_too_large",
      ),
    },
  },
  handler: (ctx) => async (request, reply) =>
    answer(ctx, reply, {
      partner_id: request.partner!.partner_id,
      month: request.params.month,
      accept: request.headers.accept,
      by: "partner",
    }),
});

export const adminMonthlyStatementRoute = endpoint({
  method: "GET",
  url: "/partners/:partner_id/wallet/statements/:month",
  schema: {
    operationId: "adminGetMonthlyStatement",
    summary: "A month of a partner's wallet (JSON or PDF)",
    description: DESCRIPTION,
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr"), month: MonthParam }),
    response: {
      ...responses,
      ...errorResponses(
        ...ADMIN_ERRORS,
        "invalid_request",
        "partner_not_found",
        "statement_too_large",
        "rate_limited",
      ),
    },
  },
  handler: (ctx) => async (request, reply) =>
    answer(ctx, reply, {
      partner_id: request.params.partner_id,
      month: request.params.month,
      accept: request.headers.accept,
      by: "operator",
    }),
});

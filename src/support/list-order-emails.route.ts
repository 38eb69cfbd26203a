// GET /v1/orders/{orderID}/emails: the order's email log (the first confirmation and every resend).
import { Type } from "typebox";
import { emailLog, MAX_LOGGED_RESENDS } from "../notifications/email-log.ts";
import { supportOrder, travellersOf } from "../orders/order-for-support.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";

const DESCRIPTION =
  "The order's emails, oldest first: its first confirmation (`kind` `confirmation`, `email_id` " +
  "`confirmation.{orderID}`), listed once queued, and each resend (`kind` `resend`, `eml_…`; at most " +
  `${MAX_LOGGED_RESENDS}). \`status\`: \`queued\` (not sent yet), \`sent\` (the SMTP server accepted it at ` +
  "`sent_at`), `failed` (the last attempt was refused or errored: `last_error` says how). `last_error` is a " +
  "class of failure, with the SMTP reply code when there is one: `rejected by the mail server (550 5.1.1)`, " +
  "`temporarily refused by the mail server (451 4.3.0)`, `mail server unreachable`, `timed out`, " +
  "`not sent: the order was refunded, its eSIM is cancelled`, or `not sent: an internal error (the operator " +
  "has the details)`; the relay's own text, which may name the operator's mail servers, stays with the operator. " +
  "A failed email is retried with backoff (about 4 days, 25 attempts in all), so it may still become " +
  "`sent`; after the last attempt, or for a resend whose order was refunded meanwhile, `failed` is final. " +
  "A top-up, an order that is not completed, or a partner that sends its own confirmations " +
  "(`confirmation_email: false`) has no confirmation in the log. A group order whose submit named `travellers` " +
  "lists one confirmation per traveller whose eSIM was made, `to` that traveller, by position: " +
  "`confirmation.{orderID}` for the first line, `confirmation.{orderID}.{position}` for the others (a declined " +
  "line has none); without travellers, its one confirmation (every eSIM) to the order's address.";

export const EmailLogEntry = Type.Object(
  {
    email_id: Type.String(),
    to: Type.String({ description: "The recipient." }),
    kind: Type.Union([Type.Literal("confirmation"), Type.Literal("resend")]),
    status: Type.Union([Type.Literal("queued"), Type.Literal("sent"), Type.Literal("failed")]),
    sent_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()], {
      description:
        "While not sent: the last attempt's failure, as a class with the SMTP reply code when there is one " +
        "(`rejected by the mail server (550 5.1.1)`, `mail server unreachable`, `timed out`, …).",
    }),
  },
  { additionalProperties: false },
);

export const listOrderEmailsRoute = endpoint({
  method: "GET",
  url: "/orders/:orderID/emails",
  schema: {
    operationId: "listOrderEmails",
    summary: "An order's email log",
    description: DESCRIPTION,
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    response: {
      200: Type.Object({ data: Type.Array(EmailLogEntry) }, { additionalProperties: false }),
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "order_not_found"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const order = await supportOrder(ctx.db, request.partner!.partner_id, request.params.orderID);
    if (!order) throw new ApiError("order_not_found", "No such order for this partner.");
    return reply.send({ data: await emailLog(ctx.db, order, await travellersOf(ctx.db, order)) });
  },
});

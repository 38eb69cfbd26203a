// POST /v1/orders/{orderID}/resend-email: the order's confirmation email again, to its address or
// another (contract "Support and finance work").
import { Type } from "typebox";
import { normaliseRecipient } from "../notifications/queue-resend.ts";
import { checkEmail, EndUserFields } from "../orders/end-user.ts";
import { endpoint, OPTIONAL_BODY } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import {
  idempotencyKeyHeader,
  MAX_HEADER_LENGTH,
  MAX_KEY_LENGTH,
  parseIdempotencyKey,
} from "../topups/idempotency-key.ts";
import { resendConfirmationEmail } from "./resend-confirmation-email.ts";

const DESCRIPTION = [
  "Queues the order's confirmation email (the eSIM's QR code and install details) again, to the " +
    "order's address or to `email` (validated as the order's email is; recorded in the email log and the " +
    "audit log). 202 means it is queued in the database: the email sweep sends it within seconds, retrying " +
    "a relay that refuses or is away as for the first confirmation. Its Message-ID is `<resend.EMAIL_ID@…>`. " +
    "Follow it in GET /v1/orders/{orderID}/emails.",
  "**Group orders** (`quantity` > 1): without `email`, when the submit named `travellers`, each traveller " +
    "whose eSIM was made gets their own email again, as at the order's completion: to their address, " +
    "greeting them, with only their eSIM (travellers sharing an address get one email with their eSIMs). " +
    "Without travellers, the order's address gets the one email with every eSIM, numbered. With `email`: one " +
    "email to that address, with the eSIMs of the travellers of that address when it is one of theirs, else " +
    "every eSIM of the order. `email_ids` lists the resends queued, one per email (`email_id` is the first). " +
    "However many emails, one request counts once toward the order's limit below; the travellers' " +
    "addresses, like the order's, are not counted as other addresses.",
  "Only a completed new-eSIM order has a confirmation email: a top-up, or a pending, failed or refunded " +
    "order (nothing to install) answers 409 `no_email_for_order`. At most 5 resends per order per rolling " +
    "24 hours, and per partner at most RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY (100 by default) to " +
    "addresses other than the order's (the order's own, in any case, is not counted): past either, 429 " +
    "`resend_limit_reached` with `Retry-After` (when the oldest of them leaves the window) and a `detail` " +
    "naming the limit; nothing is queued.",
  "**Idempotency-Key** (optional, recommended): a retried request with the same key, order and `email` " +
    "answers the same `email_id` with `Idempotent-Replayed: true` and queues nothing (never emails twice); " +
    "the same key for another order or address answers 422 `idempotency_key_reused`. Refused requests " +
    "(404, 409, 429) use no key.",
].join("\n\n");

export const resendEmailRoute = endpoint({
  method: "POST",
  url: "/orders/:orderID/resend-email",
  schema: {
    // `{"email"?}`: no body at all is the order's address, as `{}` is.
    [OPTIONAL_BODY]: true,
    operationId: "resendOrderEmail",
    summary: "Resend an order's confirmation email",
    description: DESCRIPTION,
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    headers: Type.Object({
      "idempotency-key": Type.Optional(
        Type.String({
          maxLength: MAX_HEADER_LENGTH,
          description: `Optional: 1-${MAX_KEY_LENGTH} printable ASCII characters, as for top-ups.`,
        }),
      ),
    }),
    body: Type.Object(
      {
        email: Type.Optional({
          ...EndUserFields.email,
          description: "Send to this address instead of the order's (the order keeps its own).",
        }),
      },
      { additionalProperties: false },
    ),
    response: {
      202: Type.Object(
        {
          email_id: Type.String({
            pattern: "^eml_[A-Za-z0-9_-]{16,64}$",
            description: "The resend in the email log (a group order's: the first of `email_ids`).",
          }),
          email_ids: Type.Array(Type.String({ pattern: "^eml_[A-Za-z0-9_-]{16,64}$" }), {
            minItems: 1,
            maxItems: 50,
            description:
              "Every resend this request queued, one per email: one, or a group order's one per traveller address.",
          }),
        },
        { additionalProperties: false, description: "Queued: the sweep sends it." },
      ),
      ...errorResponses(
        "invalid_request",
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "order_not_found",
        "no_email_for_order",
        "idempotency_key_reused",
        "resend_limit_reached",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const idempotency_key = parseIdempotencyKey(idempotencyKeyHeader(request.raw.rawHeaders));
    const queued = await resendConfirmationEmail(ctx, {
      partner_id: request.partner!.partner_id,
      order_id: request.params.orderID,
      email:
        request.body.email === undefined ? null : normaliseRecipient(checkEmail("email", request.body.email)),
      idempotency_key,
      actor: actorOf(request),
    });
    if (queued.replayed) reply.header("idempotent-replayed", "true");
    return reply.code(202).send({ email_id: queued.email_id, email_ids: queued.email_ids });
  },
});

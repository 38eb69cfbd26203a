// POST /admin/partners/{partner_id}/wallet/adjustments: the operator's correction of a partner's
// wallet, either sign, with a reason (issue 32).
import { Type } from "typebox";
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import {
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  errorResponses,
  MAX_REASON_LENGTH,
  PrefixedId,
  ReasonText,
} from "../shared/schemas.ts";
import { adjustWallet } from "./adjust-wallet.ts";
import { Transaction } from "./list-transactions.ts";

export const AdjustmentBody = Type.Object(
  {
    amount_minor: Type.Integer({
      minimum: -MAX_AMOUNT_MINOR,
      maximum: MAX_AMOUNT_MINOR,
      description: "Minor units, never 0: positive adds to the wallet, negative takes from it.",
    }),
    reason: ReasonText(
      "Why, for the partner to read: it is the transaction's `description` on their statement. One line " +
        `(no control characters), trimmed; 1-${MAX_REASON_LENGTH} characters.`,
    ),
    reference: Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[\\x21-\\x7e]+$",
      description:
        "Your reference for this correction. The same reference adjusts a wallet once, whatever its sign.",
    }),
  },
  { additionalProperties: false },
);

const DESCRIPTION =
  "Posted at once: a positive `amount_minor` moves money from the operator's funding account into the wallet, " +
  "a negative one from the wallet back. A debit beyond the **available** balance (pending holds deducted) " +
  "is 402 `insufficient_balance` and changes nothing: a wallet never goes below zero, even when the debit " +
  "races purchases. **Idempotent by `reference`** per wallet, like credits: the same reference with the same " +
  "amount answers 201 again with the same transaction (its first reason kept), `Idempotent-Replayed: true`, " +
  "and moves nothing; with another amount or sign, 409 `adjustment_reference_reused`. Audited with the reason. " +
  "The partner sees the row in its statement as type `adjustment`, the reason as its `description`; an " +
  "adjustment is not a credit, so it sends no `wallet.credited` event (a debit that takes the balance below " +
  "the partner's low-balance threshold sends `wallet.balance_low`, as a purchase does).";

export const adjustWalletRoute = endpoint({
  method: "POST",
  url: "/partners/:partner_id/wallet/adjustments",
  schema: {
    operationId: "adminAdjustWallet",
    summary: "Adjust a partner's wallet, either sign, with a reason (idempotent by reference)",
    description: DESCRIPTION,
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    body: AdjustmentBody,
    response: {
      201: Transaction,
      ...errorResponses(
        ...ADMIN_ERRORS,
        "invalid_request",
        "insufficient_balance",
        "partner_not_found",
        "adjustment_reference_reused",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const result = await adjustWallet(
      ctx.db,
      { partner_id: request.params.partner_id, ...request.body },
      actorOf(request),
    );
    if (!result.adjusted) reply.header("idempotent-replayed", "true");
    return reply.code(201).send(result.transaction);
  },
});

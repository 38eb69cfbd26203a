// POST /admin/partners/{partner_id}/wallet/credits: credit a partner's wallet (a bank transfer arrived).
import { Type } from "typebox";
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, Money, money, PrefixedId } from "../shared/schemas.ts";
import { creditWallet } from "./credit-wallet.ts";

export const CreditBody = Type.Object(
  {
    amount_minor: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_MINOR }),
    reference: Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: "^[\\x21-\\x7e]+$",
      description: "Your payment reference (e.g. the bank transfer id). The same reference credits once.",
    }),
  },
  { additionalProperties: false },
);
const CreditResponse = Type.Object(
  {
    balance: Money,
    credited: Type.Boolean({ description: "false when this reference had already been credited." }),
  },
  { additionalProperties: false },
);

export const creditWalletRoute = endpoint({
  method: "POST",
  url: "/partners/:partner_id/wallet/credits",
  schema: {
    operationId: "adminCreditWallet",
    summary: "Credit a partner's wallet (idempotent by reference)",
    description:
      "Idempotent by `reference`: the same reference with the same amount credits once, and answers 201 again " +
      "with `credited: false` and the header `Idempotent-Replayed: true`; with another amount, 409 " +
      "`credit_reference_reused`.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    body: CreditBody,
    response: {
      201: CreditResponse,
      ...errorResponses(...ADMIN_ERRORS, "partner_not_found", "credit_reference_reused"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const result = await creditWallet(
      ctx.db,
      { partner_id: request.params.partner_id, ...request.body },
      actorOf(request),
    );
    if (!result.credited) reply.header("idempotent-replayed", "true");
    return reply.code(201).send({
      balance: money(result.balance.available_minor, result.balance.currency),
      credited: result.credited,
    });
  },
});

// The operator API (/admin), behind ADMIN_TOKEN (checked by the hook in http/app.ts).
import { Type } from "typebox";
import type { AppContext } from "../shared/context.ts";
import type { App } from "../shared/http-types.ts";
import { ADMIN_SECURITY, errorResponses, Money, money } from "../shared/schemas.ts";
import { creditWallet } from "../wallet/credit-wallet.ts";
import { MAX_AMOUNT_MINOR } from "../wallet/ledger.sql.ts";
import { createPartner } from "./create-partner.ts";
import { issueApiKey } from "./issue-api-key.ts";
import { revokeApiKey } from "./revoke-api-key.ts";

const Id = (prefix: string) => Type.String({ pattern: `^${prefix}_[A-Za-z0-9_-]{16,64}$`, maxLength: 80 });

const CreatePartnerBody = Type.Object(
  // At least one visible character, no control characters (PostgreSQL refuses NUL in text).
  { name: Type.String({ minLength: 1, maxLength: 200, pattern: "^(?=.*\\S)[^\\x00-\\x1f\\x7f]+$" }) },
  { additionalProperties: false },
);
const CreatedPartner = Type.Object(
  {
    partner_id: Type.String(),
    name: Type.String(),
    api_key: Type.String({ description: "Shown once. Only its hash is stored." }),
    key_id: Type.String(),
  },
  { additionalProperties: false },
);
const IssuedKey = Type.Object(
  { api_key: Type.String({ description: "Shown once." }), key_id: Type.String() },
  { additionalProperties: false },
);
const CreditBody = Type.Object(
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

const ADMIN_ERRORS = ["unauthorized", "not_found"] as const;

export async function adminRoutes(app: App, ctx: AppContext): Promise<void> {
  const { app_env, currency } = ctx.config;

  app.post(
    "/partners",
    {
      schema: {
        operationId: "adminCreatePartner",
        summary: "Create a partner, its wallet and its first API key",
        tags: ["Operator"],
        security: ADMIN_SECURITY,
        body: CreatePartnerBody,
        response: { 201: CreatedPartner, ...errorResponses(...ADMIN_ERRORS) },
      },
    },
    async (request, reply) => {
      const created = await createPartner(ctx.db, { name: request.body.name.trim(), app_env, currency });
      return reply.code(201).send(created);
    },
  );

  app.post(
    "/partners/:partner_id/api-keys",
    {
      schema: {
        operationId: "adminIssueApiKey",
        summary: "Issue another API key for a partner",
        tags: ["Operator"],
        security: ADMIN_SECURITY,
        params: Type.Object({ partner_id: Id("ptr") }),
        response: {
          201: IssuedKey,
          ...errorResponses(...ADMIN_ERRORS, "partner_not_found", "api_key_limit_reached"),
        },
      },
    },
    async (request, reply) => {
      const issued = await issueApiKey(ctx.db, { partner_id: request.params.partner_id, app_env });
      return reply.code(201).send(issued);
    },
  );

  app.delete(
    "/api-keys/:key_id",
    {
      schema: {
        operationId: "adminRevokeApiKey",
        summary: "Revoke an API key, at once",
        tags: ["Operator"],
        security: ADMIN_SECURITY,
        params: Type.Object({ key_id: Id("key") }),
        response: {
          204: Type.Null({ description: "Revoked." }),
          ...errorResponses(...ADMIN_ERRORS, "api_key_not_found"),
        },
      },
    },
    async (request, reply) => {
      await revokeApiKey(ctx.db, request.params.key_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/partners/:partner_id/wallet/credits",
    {
      schema: {
        operationId: "adminCreditWallet",
        summary: "Credit a partner's wallet (idempotent by reference)",
        tags: ["Operator"],
        security: ADMIN_SECURITY,
        params: Type.Object({ partner_id: Id("ptr") }),
        body: CreditBody,
        response: {
          201: CreditResponse,
          ...errorResponses(...ADMIN_ERRORS, "partner_not_found", "credit_reference_reused"),
        },
      },
    },
    async (request, reply) => {
      const result = await creditWallet(ctx.db, { partner_id: request.params.partner_id, ...request.body });
      return reply.code(201).send({
        balance: money(result.balance.available_minor, result.balance.currency),
        credited: result.credited,
      });
    },
  );
}

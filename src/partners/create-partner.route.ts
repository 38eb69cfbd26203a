// POST /admin/partners: a new partner, its wallet and its first API key.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses } from "../shared/schemas.ts";
import { CreatedPartner, createPartner } from "./create-partner.ts";

export const CreatePartnerBody = Type.Object(
  // At least one visible character, no control characters (PostgreSQL refuses NUL in text).
  { name: Type.String({ minLength: 1, maxLength: 200, pattern: "^(?=.*\\S)[^\\x00-\\x1f\\x7f]+$" }) },
  { additionalProperties: false },
);
export const createPartnerRoute = endpoint({
  method: "POST",
  url: "/partners",
  schema: {
    operationId: "adminCreatePartner",
    summary: "Create a partner, its wallet and its first API key",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    body: CreatePartnerBody,
    response: { 201: CreatedPartner, ...errorResponses(...ADMIN_ERRORS) },
  },
  handler: (ctx) => async (request, reply) => {
    const { app_env, currency } = ctx.config;
    const created = await createPartner(
      ctx.db,
      { name: request.body.name.trim(), app_env, currency },
      actorOf(request),
    );
    return reply.code(201).send(created);
  },
});

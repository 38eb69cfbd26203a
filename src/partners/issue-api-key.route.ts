// POST /admin/partners/{partner_id}/api-keys: another key for a partner (rotation).
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, PrefixedId } from "../shared/schemas.ts";
import { IssuedApiKey, issueApiKey } from "./issue-api-key.ts";

export const issueApiKeyRoute = endpoint({
  method: "POST",
  url: "/partners/:partner_id/api-keys",
  schema: {
    operationId: "adminIssueApiKey",
    summary: "Issue another API key for a partner",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    response: {
      201: IssuedApiKey,
      ...errorResponses(...ADMIN_ERRORS, "partner_not_found", "api_key_limit_reached"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const issued = await issueApiKey(ctx.db, {
      partner_id: request.params.partner_id,
      app_env: ctx.config.app_env,
    });
    return reply.code(201).send(issued);
  },
});

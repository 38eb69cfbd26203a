// POST /admin/partners/{partner_id}/api-keys: another key for a partner (rotation), optionally
// named, read-only or limited to some addresses (issue 31).
import { Type } from "typebox";
import { adminTokenActor } from "../shared/actor.ts";
import { endpoint, OPTIONAL_BODY } from "../shared/endpoint.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, PrefixedId } from "../shared/schemas.ts";
import { IssuedApiKey, issueApiKey } from "./issue-api-key.ts";
import { ApiKeyOptionsBody } from "./key-access.ts";

export const issueApiKeyRoute = endpoint({
  method: "POST",
  url: "/partners/:partner_id/api-keys",
  schema: {
    operationId: "adminIssueApiKey",
    summary: "Issue another API key for a partner",
    description:
      "The body is optional: without one (or with `{}`) the key is unnamed, `full` and usable from any address.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    body: ApiKeyOptionsBody,
    [OPTIONAL_BODY]: true,
    response: {
      201: IssuedApiKey,
      ...errorResponses(...ADMIN_ERRORS, "partner_not_found", "api_key_limit_reached"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const issued = await issueApiKey(ctx.db, {
      partner_id: request.params.partner_id,
      app_env: ctx.config.app_env,
      actor: adminTokenActor(request.ip),
      options: request.body,
    });
    return reply.code(201).send(issued);
  },
});

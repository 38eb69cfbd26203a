// DELETE /admin/api-keys/{key_id}: revoke a key, at once, in every process.
import { Type } from "typebox";
import { adminTokenActor } from "../shared/actor.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ADMIN_ERRORS, ADMIN_SECURITY, errorResponses, PrefixedId } from "../shared/schemas.ts";
import { revokeApiKey } from "./revoke-api-key.ts";

export const revokeApiKeyRoute = endpoint({
  method: "DELETE",
  url: "/api-keys/:key_id",
  schema: {
    operationId: "adminRevokeApiKey",
    summary: "Revoke an API key, at once",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ key_id: PrefixedId("key") }),
    response: {
      204: Type.Null({ description: "Revoked." }),
      ...errorResponses(...ADMIN_ERRORS, "api_key_not_found"),
    },
  },
  handler: (ctx) => async (request, reply) => {
    await revokeApiKey(ctx.db, request.params.key_id, adminTokenActor(request.ip));
    return reply.code(204).send(null);
  },
});

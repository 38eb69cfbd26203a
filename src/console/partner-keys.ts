// The partner's API keys: list, issue (shown once) and revoke, through the operator's use cases
// scoped to the signed-in person's partner, audited in that person's name.
import type { FastifyRequest } from "fastify";
import { issueApiKey } from "../partners/issue-api-key.ts";
import { partnerKeys } from "../partners/list-partners.ts";
import { revokeApiKey } from "../partners/revoke-api-key.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { readsQuery } from "../shared/query-names.ts";
import { type Html, html } from "./html.ts";
import { issuedKey, issueKeyForm, keyAccessFromForm, keysTable } from "./keys-table.ts";
import { notice, page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { formOf, partnerOf, queryValue, seeOther } from "./request.ts";
import { partnerShell } from "./shells.ts";

async function keysPage(request: FastifyRequest, ctx: AppContext, top: Html): Promise<string> {
  const partner_id = partnerOf(request);
  const shell = await partnerShell(request, ctx, "/console/keys");
  const csrf = shell.signed_in!.csrf;
  const keys = await partnerKeys(ctx.db, partner_id);
  const body = html`${top}
    <p>Rotate a key by issuing a new one, switching your systems to it, then revoking the old one.</p>
    ${keysTable(keys, (key_id) => `/console/keys/${key_id}/revoke`, csrf, null)}
    <h2>Issue a key</h2>
    ${issueKeyForm("/console/keys", csrf)}`;
  return page("API keys", shell, body);
}

export const partnerKeyPages: ConsolePages = (scope, ctx) => {
  scope.get("/keys", readsQuery("revoked"), async (request, reply) => {
    const top = queryValue(request, "revoked")
      ? notice("ok", "The key is revoked; requests with it are refused from now on.")
      : html``;
    return reply.type("text/html; charset=utf-8").send(await keysPage(request, ctx, top));
  });
  // The new key is in this response only (no redirect to a page that could show it again).
  scope.post("/keys", async (request, reply) => {
    const issued = await issueApiKey(ctx.db, {
      partner_id: partnerOf(request),
      app_env: ctx.config.app_env,
      actor: actorOf(request),
      options: keyAccessFromForm(formOf(request)),
    });
    return reply
      .type("text/html; charset=utf-8")
      .send(await keysPage(request, ctx, issuedKey(issued.api_key, issued.key_id)));
  });
  scope.post("/keys/:key_id/revoke", async (request, reply) => {
    const { key_id } = request.params as { key_id: string };
    const own = await partnerKeys(ctx.db, partnerOf(request));
    if (!own.some((k) => k.key_id === key_id))
      throw new ApiError("api_key_not_found", `No API key ${key_id} of yours.`);
    await revokeApiKey(ctx.db, key_id, actorOf(request));
    return seeOther(reply, "/console/keys?revoked=1");
  });
};

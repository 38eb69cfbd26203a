// Partner use case: add a webhook endpoint (at most 10 per partner). The signing secret is made
// here, stored sealed, and returned this once.
import { recordAudit } from "../audit/record-audit.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { checkWebhookUrl } from "./check-webhook-url.ts";
import { insertEndpoint, lockAndCountEndpoints } from "./endpoints.sql.ts";
import { MAX_ENDPOINTS_PER_PARTNER, renderEndpoint, type WebhookEndpointBody } from "./render-webhooks.ts";
import { newSigningSecret, secretsOf } from "./secrets.ts";

export type NewEndpoint = { url: string; description?: string | null; event_types?: string[] };

export async function createEndpoint(
  ctx: AppContext,
  partner_id: string,
  input: NewEndpoint,
  actor: Actor,
): Promise<WebhookEndpointBody & { secret: string }> {
  const url = await checkWebhookUrl(ctx.config, input.url);
  const endpoint_id = newId("webhook_endpoint");
  const secret = newSigningSecret();
  const secret_sealed = secretsOf(ctx.config).seal(endpoint_id, secret);
  const row = await ctx.db.transaction().execute(async (trx) => {
    if ((await lockAndCountEndpoints(trx, partner_id)) >= MAX_ENDPOINTS_PER_PARTNER) {
      throw new ApiError(
        "webhook_endpoint_limit_reached",
        `A partner has at most ${MAX_ENDPOINTS_PER_PARTNER} webhook endpoints; delete one first.`,
      );
    }
    const inserted = await insertEndpoint(trx, {
      endpoint_id,
      partner_id,
      url,
      description: input.description ?? null,
      event_types: input.event_types ?? [],
      secret_sealed,
    });
    await recordAudit(trx, {
      actor,
      action: "webhook_endpoint.created",
      partner_id,
      target: { type: "webhook_endpoint", id: endpoint_id },
      details: { url, event_types: inserted.event_types },
    });
    return inserted;
  });
  return { ...renderEndpoint(row), secret };
}

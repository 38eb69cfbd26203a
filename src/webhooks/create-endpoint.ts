// Partner use case: add a webhook endpoint (at most 10 per partner). The signing secret is made
// here, stored sealed, and returned this once.
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
    return insertEndpoint(trx, {
      endpoint_id,
      partner_id,
      url,
      description: input.description ?? null,
      event_types: input.event_types ?? [],
      secret_sealed,
    });
  });
  return { ...renderEndpoint(row), secret };
}

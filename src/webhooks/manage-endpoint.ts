// Partner use cases on one existing endpoint: read, list, change, delete, rotate its secret. Every one
// names the partner, so another partner's endpoint is 404 webhook_endpoint_not_found like an unknown one.
import { recordAudit } from "../audit/record-audit.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { checkWebhookUrl } from "./check-webhook-url.ts";
import {
  deleteEndpoint,
  type EndpointPatch,
  type EndpointRow,
  endpointById,
  endpointsOf,
  rotateSecret,
  updateEndpoint,
} from "./endpoints.sql.ts";
import { renderEndpoint, type WebhookEndpointBody } from "./render-webhooks.ts";
import { newSigningSecret, secretsOf } from "./secrets.ts";

/** The previous secret signs beside the new one this long after a rotation (contract: 24 hours). */
export const ROTATION_OVERLAP_S = 24 * 3600;

export function endpointNotFound(): ApiError {
  return new ApiError("webhook_endpoint_not_found", "No such webhook endpoint for this partner.");
}

export async function requireEndpoint(
  ctx: AppContext,
  partner_id: string,
  endpoint_id: string,
): Promise<EndpointRow> {
  const row = await endpointById(ctx.db, partner_id, endpoint_id);
  if (row === null) throw endpointNotFound();
  return row;
}

export async function getEndpoint(ctx: AppContext, partner_id: string, endpoint_id: string) {
  return renderEndpoint(await requireEndpoint(ctx, partner_id, endpoint_id));
}

export async function listEndpoints(ctx: AppContext, partner_id: string): Promise<WebhookEndpointBody[]> {
  return (await endpointsOf(ctx.db, partner_id)).map(renderEndpoint);
}

export async function changeEndpoint(
  ctx: AppContext,
  partner_id: string,
  endpoint_id: string,
  patch: EndpointPatch,
  actor: Actor,
): Promise<WebhookEndpointBody> {
  const checked =
    patch.url === undefined ? patch : { ...patch, url: await checkWebhookUrl(ctx.config, patch.url) };
  const row = await ctx.db.transaction().execute(async (trx) => {
    const updated = await updateEndpoint(trx, partner_id, endpoint_id, checked);
    if (updated === null) throw endpointNotFound();
    // The fields the change named, as given: what a person asks about ("who disabled it?").
    await recordAudit(trx, {
      actor,
      action: "webhook_endpoint.updated",
      partner_id,
      target: { type: "webhook_endpoint", id: endpoint_id },
      details: { changed: checked },
    });
    return updated;
  });
  return renderEndpoint(row);
}

/** Its deliveries go with it (nothing more is sent); its events stay in GET /v1/events. */
export async function removeEndpoint(
  ctx: AppContext,
  partner_id: string,
  endpoint_id: string,
  actor: Actor,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteEndpoint(trx, partner_id, endpoint_id))) throw endpointNotFound();
    await recordAudit(trx, {
      actor,
      action: "webhook_endpoint.deleted",
      partner_id,
      target: { type: "webhook_endpoint", id: endpoint_id },
    });
  });
}

export async function rotateEndpointSecret(
  ctx: AppContext,
  partner_id: string,
  endpoint_id: string,
  actor: Actor,
): Promise<{ secret: string }> {
  await requireEndpoint(ctx, partner_id, endpoint_id);
  const secret = newSigningSecret();
  const sealed = secretsOf(ctx.config).seal(endpoint_id, secret);
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await rotateSecret(trx, partner_id, endpoint_id, sealed, ROTATION_OVERLAP_S)))
      throw endpointNotFound();
    // Never the secret: the entry says a rotation happened and when the previous one stops signing.
    await recordAudit(trx, {
      actor,
      action: "webhook_endpoint.secret_rotated",
      partner_id,
      target: { type: "webhook_endpoint", id: endpoint_id },
      details: { previous_secret_signs_for_s: ROTATION_OVERLAP_S },
    });
  });
  return { secret };
}

// POST /carrier/airalo/webhooks: Airalo's webhooks (README "Suppliers"), the URL an operator opts in
// at Airalo (POST /v2/notifications/opt-in, types `webhook_low_data` and `async_orders`), beside the
// carrier's callback. Not a partner route. Airalo probes the URL with HEAD at opt-in and wants 200
// (docs/suppliers/airalo.md §8), so HEAD answers 200. A POST is verified before anything is read:
// `airalo-signature` must be Airalo's HMAC-SHA512 of the body under AIRALO_CLIENT_SECRET
// (src/carrier/airalo/webhook.ts), else 401 and nothing changes. A low-data notification names an
// eSIM: its state is pulled from Airalo through the adapter and applied as every carrier signal is
// (apply-signal.ts), so its usage reaches partners as eSIM events; applying twice changes nothing,
// so Airalo may re-send freely; a body repeated for an ICCID within minutes is not pulled again
// (recent-webhooks.ts: the signature covers no timestamp, so a replay would spend Airalo's usage
// limit). When Airalo cannot be asked now, the eSIM is made due for its next
// pull instead. Credit-limit and async-order notifications are logged (we place no async orders).

import { isSignedByAiralo, MAX_WEBHOOK_BYTES, readAiraloWebhook } from "../carrier/airalo/webhook.ts";
import type { EsimStateOutcome } from "../carrier/carrier.ts";
import { parseJson } from "../carrier/supplier-http.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { applySignal } from "./apply-signal.ts";
import type { RecentWebhooks } from "./recent-webhooks.ts";
import { pullSoon } from "./sync-esims.ts";

export const AIRALO_WEBHOOK_PATH = "/carrier/airalo/webhooks";

export type AiraloWebhookDeps = {
  /** AIRALO_CLIENT_SECRET: the key of Airalo's signature. */
  client_secret: string;
  /** The process's Airalo adapter's pull of one eSIM (through ctx.carrier: its rate limits). */
  esimState: (iccid: string) => Promise<EsimStateOutcome>;
  /** Bodies received lately, per ICCID: a repeat is acknowledged, not pulled again. */
  recent: RecentWebhooks;
};

/** ICCIDs of one async-order notification whose state is pulled; more are left to their pulls. */
const MAX_ICCIDS_PER_DELIVERY = 5;

type Pulled = "changed" | "unchanged" | "unknown_esim" | "pull_scheduled" | "repeated";

async function pullAndApply(ctx: AppContext, deps: AiraloWebhookDeps, iccid: string): Promise<Pulled> {
  const state = await deps.esimState(iccid);
  if (state.kind === "not_found") return "unknown_esim";
  if (state.kind === "unavailable") {
    await pullSoon(ctx.db, iccid);
    return "pull_scheduled";
  }
  const applied = await applySignal(ctx, state.value, "pull");
  if (applied.kind === "unknown_esim") return "unknown_esim";
  return applied.changed ? "changed" : "unchanged";
}

export async function airaloWebhookRoutes(app: App, ctx: AppContext, deps: AiraloWebhookDeps): Promise<void> {
  await app.register(async (scope) => {
    // The signature is over the bytes Airalo sent: the body is kept as text and parsed after.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      "*",
      { parseAs: "string", bodyLimit: MAX_WEBHOOK_BYTES },
      (_request, body, done) => done(null, body),
    );
    scope.route({
      method: "HEAD",
      url: AIRALO_WEBHOOK_PATH,
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(200).send(),
    });
    scope.route({
      method: "POST",
      url: AIRALO_WEBHOOK_PATH,
      schema: { hide: true },
      handler: async (request, reply) => {
        const raw = typeof request.body === "string" ? request.body : "";
        const signature = request.headers["airalo-signature"];
        if (
          !isSignedByAiralo(deps.client_secret, raw, typeof signature === "string" ? signature : undefined)
        ) {
          throw new ApiError(
            "unauthorized",
            "The airalo-signature header is missing or is not Airalo's signature of this body. Nothing was changed.",
          );
        }
        const body = parseJson(raw);
        if (body === undefined) throw new ApiError("invalid_request", "The body is not JSON.");
        const webhook = readAiraloWebhook(body);
        const iccids =
          webhook.kind === "low_data"
            ? [webhook.iccid]
            : webhook.kind === "async_order"
              ? webhook.iccids.slice(0, MAX_ICCIDS_PER_DELIVERY)
              : [];
        const pulled: Record<string, Pulled> = {};
        for (const iccid of iccids) {
          pulled[iccid] = deps.recent.repeated(iccid, raw)
            ? "repeated"
            : await pullAndApply(ctx, deps, iccid);
        }
        if (webhook.kind === "credit_limit") {
          request.log.warn(
            { remaining: webhook.remaining, message: webhook.message },
            "Airalo credit limit notification: top up the Airalo account",
          );
        } else if (webhook.kind === "other") {
          request.log.warn("Airalo webhook of a shape its docs do not describe; accepted and ignored");
        }
        return reply.send({ received: true, kind: webhook.kind, esims: pulled });
      },
    });
  });
}

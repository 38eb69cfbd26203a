// What Airalo's webhook route needs from the configuration: its signing key and an adapter to pull
// an eSIM's state with (src/esims/airalo-webhook.route.ts). Only with AIRALO_CLIENT_ID and
// AIRALO_CLIENT_SECRET set: without them the route does not exist (404, as an unknown route).
import { AiraloCarrier } from "../carrier/airalo/airalo-carrier.ts";
import { DEFAULT_AIRALO_API_URL } from "../carrier/airalo/config.ts";
import type { AiraloWebhookDeps } from "../esims/airalo-webhook.route.ts";
import type { AppContext } from "../shared/context.ts";

export function airaloWebhookDeps(ctx: AppContext): AiraloWebhookDeps | null {
  const { airalo_client_id: client_id, airalo_client_secret: client_secret } = ctx.config;
  if (client_id === null || client_secret === null) return null;
  const adapter = new AiraloCarrier({
    pool: ctx.pool,
    base_url: ctx.config.airalo_api_url ?? DEFAULT_AIRALO_API_URL,
    client_id,
    client_secret,
    timeout_ms: ctx.config.supplier_timeout_ms,
  });
  return { client_secret, esimState: (iccid) => adapter.esimState(iccid) };
}

// What Airalo's webhook route needs from the configuration: its signing key and the process's own
// Airalo adapter, reached through the router (ctx.carrier) so its pulls share the rate limits the
// sync and every other call keep (src/esims/airalo-webhook.route.ts). Only with AIRALO_CLIENT_ID
// and AIRALO_CLIENT_SECRET set: without them the route does not exist (404, as an unknown route).

import type { AiraloWebhookDeps } from "../esims/airalo-webhook.route.ts";
import { RecentWebhooks } from "../esims/recent-webhooks.ts";
import type { AppContext } from "../shared/context.ts";

export function airaloWebhookDeps(ctx: AppContext): AiraloWebhookDeps | null {
  const { airalo_client_id: client_id, airalo_client_secret: client_secret } = ctx.config;
  if (client_id === null || client_secret === null) return null;
  return {
    client_secret,
    esimState: (iccid) => ctx.carrier.esimState(iccid, "airalo"),
    recent: new RecentWebhooks(),
  };
}

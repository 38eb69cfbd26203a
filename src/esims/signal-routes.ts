// The carrier-signal side of the eSIMs domain: the sandbox simulate route (mounted under /v1) and
// the carrier's callback (mounted at the root, outside the partner API).

import type { AppContext } from "../shared/context.ts";
import { routesOf } from "../shared/endpoint.ts";
import type { App } from "../shared/http-types.ts";
import { carrierCallbackRoute, type PendingReferences } from "./carrier-callback.route.ts";
import { simulateEsimRoute } from "./simulate-esim.route.ts";
import { smdpProgressRoute } from "./smdp-progress.route.ts";

const sandboxRoutes = routesOf([simulateEsimRoute]);

/**
 * Sandbox only: in production the route does not exist, so any request to it (whatever its body
 * or key) is the 404 `not_found` of an unknown route, as the contract says.
 */
export async function esimSignalRoutes(app: App, ctx: AppContext): Promise<void> {
  if (ctx.config.app_env === "sandbox") await sandboxRoutes(app, ctx);
}
/** The carrier's callback, told by the caller which bundle references are orders still pending. */
export function carrierCallbackRoutes(pendingReferences: PendingReferences) {
  return routesOf([carrierCallbackRoute(pendingReferences)]);
}
/** The SM-DP+'s HandleDownloadProgressInfo (CARRIER_PROFILES=es2plus), at its ES2+ path. */
export const smdpCallbackRoutes = routesOf([smdpProgressRoute]);

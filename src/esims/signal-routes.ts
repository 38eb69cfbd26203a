// The carrier-signal side of the eSIMs domain: the sandbox simulate route (mounted under /v1) and
// the carrier's callback (mounted at the root, outside the partner API).
import { routesOf } from "../shared/endpoint.ts";
import { carrierCallbackRoute } from "./carrier-callback.route.ts";
import { simulateEsimRoute } from "./simulate-esim.route.ts";

export const esimSignalRoutes = routesOf([simulateEsimRoute]);
export const carrierCallbackRoutes = routesOf([carrierCallbackRoute]);

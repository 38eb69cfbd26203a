// The traveller's pages, mounted at the root by the server (not under /v1: no API key, no JSON).
import type { AppContext } from "../shared/context.ts";
import type { App } from "../shared/http-types.ts";
import { type DocumentHeaders, installPageRoute } from "./install-page.route.ts";

export async function travellerRoutes(app: App, ctx: AppContext, headers: DocumentHeaders): Promise<void> {
  installPageRoute(app, ctx, headers);
}

// The partners' operator endpoints (/admin, behind ADMIN_TOKEN, checked by server/app.ts), in this order.
import { routesOf } from "../shared/endpoint.ts";
import { createPartnerRoute } from "./create-partner.route.ts";
import { issueApiKeyRoute } from "./issue-api-key.route.ts";
import { revokeApiKeyRoute } from "./revoke-api-key.route.ts";

export const partnerAdminRoutes = routesOf([createPartnerRoute, issueApiKeyRoute, revokeApiKeyRoute]);

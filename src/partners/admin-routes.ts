// The partners' operator endpoints (/admin, behind ADMIN_TOKEN, checked by server/app.ts), in this order.
import { routesOf } from "../shared/endpoint.ts";
import { createPartnerRoute } from "./create-partner.route.ts";
import { getPartnerRoute } from "./get-partner.route.ts";
import { issueApiKeyRoute } from "./issue-api-key.route.ts";
import { listPartnersRoute } from "./list-partners.route.ts";
import { revokeApiKeyRoute } from "./revoke-api-key.route.ts";
import { updatePartnerRoute } from "./update-partner.route.ts";

export const partnerAdminRoutes = routesOf([
  listPartnersRoute,
  createPartnerRoute,
  getPartnerRoute,
  updatePartnerRoute,
  issueApiKeyRoute,
  revokeApiKeyRoute,
]);

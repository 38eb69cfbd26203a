// The catalog's endpoints, in this order (the order of the OpenAPI document): for partners under
// /v1, for the operator under /admin.
import { routesOf } from "../shared/endpoint.ts";
import { getPartnerPricingRoute } from "./get-partner-pricing.route.ts";
import { listCatalogChangesRoute } from "./list-catalog-changes.route.ts";
import { listCompatibleDevicesRoute } from "./list-compatible-devices.route.ts";
import { listDestinationPackagesRoute } from "./list-destination-packages.route.ts";
import { listDestinationsRoute } from "./list-destinations.route.ts";
import { setPartnerPricingRoute } from "./set-partner-pricing.route.ts";

export const catalogRoutes = routesOf([
  listDestinationsRoute,
  listDestinationPackagesRoute,
  listCatalogChangesRoute,
  listCompatibleDevicesRoute,
]);
export const catalogAdminRoutes = routesOf([getPartnerPricingRoute, setPartnerPricingRoute]);

// The top-ups' partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { listAvailableTopUpsRoute } from "./list-available-topups.route.ts";
import { submitTopUpRoute } from "./submit-topup.route.ts";

export const topupRoutes = routesOf([listAvailableTopUpsRoute, submitTopUpRoute]);

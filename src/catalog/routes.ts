// The catalog's partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { listDestinationPackagesRoute } from "./list-destination-packages.route.ts";

export const catalogRoutes = routesOf([listDestinationPackagesRoute]);

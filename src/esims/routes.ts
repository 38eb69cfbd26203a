// The eSIMs' partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { getEsimRoute } from "./get-esim.route.ts";
import { getEsimQrPngRoute } from "./get-esim-qr-png.route.ts";
import { listEsimsRoute } from "./list-esims.route.ts";

export const esimRoutes = routesOf([listEsimsRoute, getEsimRoute, getEsimQrPngRoute]);

// The carts' partner endpoints, mounted under /v1 in this order (the order of the OpenAPI document).
import { routesOf } from "../shared/endpoint.ts";
import { createCartRoute } from "./create-cart.route.ts";

export const cartRoutes = routesOf([createCartRoute]);

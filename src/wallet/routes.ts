// The wallet's partner endpoints, mounted under /v1 in this order.
import { routesOf } from "../shared/endpoint.ts";
import { getWallet } from "./get-wallet.route.ts";

export const walletRoutes = routesOf([getWallet]);

// The wallet's endpoints, in this order: for partners under /v1, for the operator under /admin.
import { routesOf } from "../shared/endpoint.ts";
import { adjustWalletRoute } from "./adjust-wallet.route.ts";
import { creditWalletRoute } from "./credit-wallet.route.ts";
import { adminMonthlyStatementRoute, getMonthlyStatementRoute } from "./get-monthly-statement.route.ts";
import { getWalletRoute } from "./get-wallet.route.ts";
import { listTransactionsRoute } from "./list-transactions.route.ts";
import { setLowBalanceAlertRoute } from "./set-low-balance-alert.route.ts";

export const walletRoutes = routesOf([
  getWalletRoute,
  listTransactionsRoute,
  getMonthlyStatementRoute,
  setLowBalanceAlertRoute,
]);
export const walletAdminRoutes = routesOf([creditWalletRoute, adjustWalletRoute, adminMonthlyStatementRoute]);

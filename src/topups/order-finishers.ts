// The finishing steps of each order type, as the domain that creates such orders defines them:
// what the resolver (server/worker.ts), the CLI's `orders settle`, the operator API's settle route
// and the operator console's settle form hand the order driver. Here, above the orders and beside
// the top-ups, because a top-up's steps belong to the top-ups (finish-topup.ts).
import type { Config } from "../config.ts";
import { FINISH_ESIM, type FinishByType } from "../orders/finish.ts";
import { finishTopUp } from "./finish-topup.ts";

export function orderFinishers(config: Pick<Config, "idempotency_ttl_hours">): FinishByType {
  return { esim: FINISH_ESIM, topup: finishTopUp(config.idempotency_ttl_hours) };
}

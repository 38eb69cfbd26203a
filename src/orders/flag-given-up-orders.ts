// Pending orders past PENDING_GIVE_UP_HOURS are the operator's to settle (the resolver keeps asking
// the carrier, but never guesses, until PENDING_FAIL_AFTER_HOURS: give-up-order.ts). Every run of
// flag_given_up_orders names them in an error log line, beside the esim_orders_pending_given_up
// metric and `npm run cli -- orders pending`.
import type { AppContext } from "../shared/context.ts";
import { listPendingOrders } from "./orders.sql.ts";

/** Orders named per log line; the metric and the CLI give the full count and list. */
const MAX_NAMED = 20;

export async function flagGivenUpOrders(ctx: AppContext, log: (message: string) => void): Promise<number> {
  const hours = ctx.config.pending_give_up_hours;
  const given_up = (await listPendingOrders(ctx.db, hours, MAX_NAMED)).filter((order) => order.given_up);
  if (given_up.length > 0) {
    log(
      `${given_up.length === MAX_NAMED ? "at least " : ""}${given_up.length} orders pending for more than ` +
        `${hours} h (PENDING_GIVE_UP_HOURS), money held: ${given_up.map((o) => o.order_id).join(", ")}; ` +
        "settle each with `npm run cli -- orders settle <order_id> --completed|--failed`, or at once with " +
        `POST /admin/orders/{orderID}/settle; past PENDING_FAIL_AFTER_HOURS (${ctx.config.pending_fail_after_hours} h) ` +
        "the resolver ends them itself",
    );
  }
  return given_up.length;
}

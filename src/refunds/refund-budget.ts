// Refunds per partner are bounded (REFUNDS_PER_PARTNER_PER_HOUR): a refund costs the carrier a
// cancel and us an ICCID of the package's inventory (our eSIMs are keyed by ICCID, so a refunded
// one is never handed out again), so a buy-then-refund loop must not be able to empty a package for
// everyone. Checked only where a new refund intent would be written, inside that transaction: a
// refund over the bound is 429 `rate_limited` with Retry-After (when the oldest refund of the hour
// leaves it) and changes nothing (the transaction, its Idempotency-Key claim included, rolls back).
// Replays of a refunded order, and retries of a refund under way, are never counted again.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { lockRecentRefunds } from "./refunds.sql.ts";

export async function checkRefundBudget(
  trx: Transaction<Database>,
  partner_id: string,
  per_hour: number,
): Promise<void> {
  const recent = await lockRecentRefunds(trx, partner_id);
  if (recent.count < per_hour) return;
  const retry_s = Math.max(1, recent.frees_in_s);
  throw new ApiError(
    "rate_limited",
    `At most ${per_hour} refunds per hour; the next one is possible in ${retry_s} s. Nothing was changed.`,
    { headers: { "retry-after": String(retry_s) } },
  );
}

// Group purchase (issue 34): carts of 10 eSIMs, each submitted once with ten travellers named
// (ten confirmation emails, as ten single purchases send), under the purchase's load, and its CPU
// per eSIM set beside the single purchase's of the same run: one group of 10 against ten purchases.

import { submitRun } from "../support/carts.ts";
import {
  type Context,
  GROUP_QUANTITY,
  log,
  PURCHASE_CONCURRENCY,
  type ScenarioResult,
} from "../support/context.ts";
import { record, wrkScenario } from "../support/runner.ts";

export async function purchaseGroup(ctx: Context, single: ScenarioResult | null): Promise<void> {
  // Ten eSIMs an answer: a tenth of the single purchase's answers, to size the warm-up's carts.
  const expected = (single?.ok_per_s ?? 100) / GROUP_QUANTITY;
  const before = await groupOrders(ctx);
  const run = await submitRun(
    ctx,
    "purchase-group",
    PURCHASE_CONCURRENCY,
    expected,
    Number.POSITIVE_INFINITY,
    undefined,
    GROUP_QUANTITY,
  );
  const result = wrkScenario(
    `purchase group of ${GROUP_QUANTITY} (service)`,
    "none: CPU per eSIM beside purchase",
    PURCHASE_CONCURRENCY,
    run,
    true,
  );
  result.cpu_us_per_esim = run.cpu_us_per_esim;
  const after = await groupOrders(ctx);
  const orders = after.completed - before.completed;
  result.notes.push(
    `${run.result.s2xx} answers 200, ${run.completed} group orders completed by the end of the drain ` +
      `(${run.esims} eSIMs); warm-up and run: ${orders} completed with ${after.esims - before.esims} eSIMs ` +
      `(${after.failed_lines - before.failed_lines} lines failed), ${after.pending - before.pending} pending`,
    `${run.emails_sent} confirmation email deliveries recorded during the run, ` +
      `${run.emails_queued} still queued at the end`,
  );
  const beside = perEsim(result, single);
  result.notes.push(beside);
  record(ctx, result);
  ctx.notes.push(`purchase-group: ${beside}`);
  log(`purchase-group: ${beside}`);
}

/** The bench's group orders so far: every completed one should hold GROUP_QUANTITY eSIMs. */
async function groupOrders(
  ctx: Context,
): Promise<{ completed: number; pending: number; esims: number; failed_lines: number }> {
  const result = await ctx.pool.query<{
    completed: string;
    pending: string;
    esims: string;
    failed_lines: string;
  }>(
    `select count(*) filter (where o.status = 'completed') as completed,
            count(*) filter (where o.status = 'pending') as pending,
            coalesce(sum((select count(*) from purchases p where p.order_id = o.order_id))
                     filter (where o.status = 'completed'), 0) as esims,
            coalesce(sum((select count(*) from order_lines l
                          where l.order_id = o.order_id and l.status = 'failed')), 0) as failed_lines
     from orders o where o.quantity = $1 and o.type = 'esim'`,
    [GROUP_QUANTITY],
  );
  const row = result.rows[0]!;
  return {
    completed: Number(row.completed),
    pending: Number(row.pending),
    esims: Number(row.esims),
    failed_lines: Number(row.failed_lines),
  };
}

/**
 * CPU ms per eSIM, the group's and the single purchase's: all each run caused (the run and its
 * drain) over the eSIMs it made, so requests in flight at the end, which are many more for answers
 * ten times as long, and emails sent after the run count for both alike.
 */
function perEsim(group: ScenarioResult, single: ScenarioResult | null): string {
  const ms = (us: number) => Math.round(us / 10) / 100;
  const text = (cpu: NonNullable<ScenarioResult["cpu_us_per_esim"]>) => {
    const total = cpu.service + cpu.postgres + cpu.simulator;
    return {
      total,
      text: `service ${ms(cpu.service)}, PostgreSQL ${ms(cpu.postgres)}, simulator ${ms(cpu.simulator)}, all three ${ms(total)}`,
    };
  };
  const own = text(group.cpu_us_per_esim!);
  const figures =
    `CPU ms per eSIM, groups of ${GROUP_QUANTITY} (${group.ok_per_s} groups/s = ` +
    `${group.ok_per_s * GROUP_QUANTITY} eSIMs/s): ${own.text}`;
  if (single?.cpu_us_per_esim === undefined)
    return `${figures} (the single purchase not measured in this run: add --only purchase)`;
  const theirs = text(single.cpu_us_per_esim);
  const times = theirs.total > 0 ? Math.round((100 * own.total) / theirs.total) / 100 : "-";
  return (
    `${figures}; single purchases (${single.ok_per_s} eSIMs/s): ${theirs.text}; ` +
    `an eSIM of a group costs ${times}x one bought alone`
  );
}

// After the stream: faults cleared, processes restarted clean, pending orders and emails settled.

import { runCli } from "../cli.ts";
import { startSlot, withSlot } from "./faults.ts";
import { type Run, sleep } from "./state.ts";

export async function drain(run: Run): Promise<void> {
  const { cluster } = run;
  await cluster.simulator.control({
    latency_ms: 0,
    refuse_share: 0,
    timeout_share: 0,
    fail_share: 0,
    down: false,
  });
  await cluster.smdp?.control({
    latency_ms: 0,
    fail_share: 0,
    drop_share: 0,
    bad_header_share: 0,
    down: false,
  });
  // The suppliers' armed faults disarmed (the rate limits stay: they are the suppliers' own).
  await cluster.suppliers?.airalo.control("/control", { disarm: true });
  await cluster.suppliers?.esimgo.control("/sandbox/control", { clear_faults: true });
  // Processes armed with a crash point would die on the resolver's next purchase: start them clean.
  for (let slot = 0; slot < cluster.services.length; slot++) {
    await withSlot(run, slot, async () => {
      if (run.armed.has(slot) || cluster.services[slot] === null) await startSlot(run, slot, null);
    });
  }
  const started = Date.now();
  const deadline = started + run.options.drain_timeout_s * 1000;
  let last_log = 0;
  for (;;) {
    // The faults are cleared: a delivery whose attempts were cut by a kill and a 503 waits minutes
    // for its next step of the retry schedule. Bring it forward, as the manual retry route does;
    // an event with no delivery at all is still a breach.
    await cluster.pool.query(
      "update webhook_deliveries set next_attempt_at = now() where status = 'pending' and next_attempt_at > now()",
    );
    // Likewise a refund the sweep backed off from (up to 5 minutes after repeated unknown answers
    // under the stream's faults): due now. Only one no process holds (lease_token null): a live
    // lease is left to its holder.
    await cluster.pool.query(
      "update order_refunds set lease_until = now() where state = 'refunding' and lease_token is null and lease_until > now()",
    );
    await settleHeldRefunds(run);
    const state = await cluster.pool.query<{
      pending: number;
      refunding: number;
      emails: number;
      esims: number;
      delivered: number;
      webhooks: number;
    }>(`
      select (select count(*) from orders where status = 'pending')::int as pending,
             (select count(*) from order_refunds where state = 'refunding')::int as refunding,
             (select count(*) from email_outbox)::int as emails,
             (select count(*) from orders where type = 'esim' and status = 'completed')::int as esims,
             (select count(*) from email_deliveries)::int as delivered,
             ((select count(*) from events where dispatched_at is null)
               + (select count(*) from webhook_deliveries where status = 'pending'))::int as webhooks`);
    const { pending, refunding, emails, esims, delivered, webhooks } = state.rows[0]!;
    const settled =
      pending === 0 &&
      refunding === 0 &&
      emails === 0 &&
      webhooks === 0 &&
      delivered >= esims &&
      cluster.smtp.messages.length >= esims;
    if (settled) break;
    if (Date.now() - last_log > 5_000) {
      run.options.log(
        `  draining: ${pending} pending orders, ${refunding} refunds under way, ${emails} emails queued, ` +
          `${delivered}/${esims} emails delivered, ${webhooks} webhook events or deliveries pending`,
      );
      last_log = Date.now();
    }
    if (Date.now() > deadline) {
      run.options.log(
        `  drain timed out after ${run.options.drain_timeout_s} s; the audit will say what is left`,
      );
      await describeStuckJobs(run);
      break;
    }
    await sleep(500);
  }
  run.stats.drain_s = Math.round((Date.now() - started) / 100) / 10;
}

/** Held refunds settled per drain round, each one CLI run. */
const MAX_SETTLED_PER_ROUND = 10;

/**
 * Refunds held on an ambiguous CancelOrder (a dropped answer, then 3.5) wait for an operator: do what
 * the operator does (README "Refunds held"): look the ICCID up at the SM-DP+ and settle it with the
 * CLI, cancelled when the SM-DP+ holds the profile as not downloaded, installed otherwise.
 */
async function settleHeldRefunds(run: Run): Promise<void> {
  const { cluster } = run;
  if (cluster.smdp === null) return;
  const held = await cluster.pool.query<{ reference: string; iccid: string }>(
    `select reference, iccid from es2plus_profile_orders
     where cancel_ambiguous_at is not null and state = 'released' order by reference limit $1`,
    [MAX_SETTLED_PER_ROUND],
  );
  for (const { reference, iccid } of held.rows) {
    const state = (await cluster.smdp.profile(iccid))?.state;
    const verdict = state === "AVAILABLE" || state === "UNAVAILABLE" ? "--cancelled" : "--installed";
    const settled = await runCli(["refunds", "settle", reference, verdict, "--json"], cluster.env);
    run.options.log(`  held refund ${reference} (${state}) settled ${verdict}: exit ${settled.code}`);
  }
}

/** The work still queued after a drain timed out, for the report: why is something not done? */
export async function describeStuckJobs(run: Run): Promise<void> {
  const refunds = await run.cluster.pool.query<{
    order_id: string;
    attempts: number;
    lease_until: Date;
    held: boolean;
    last_error: string | null;
  }>(`select order_id, attempts, lease_until, lease_token is not null as held, last_error
      from order_refunds where state = 'refunding' order by order_id limit 20`);
  for (const refund of refunds.rows) {
    run.options.log(
      `  stuck refund ${refund.order_id}: attempts ${refund.attempts}, ${refund.held ? "leased" : "due"} ` +
        `${refund.lease_until.toISOString()}${refund.last_error ? `, last error ${refund.last_error}` : ""}`,
    );
  }
  const emails = await run.cluster.pool.query<{
    order_id: string;
    attempts: number;
    due_at: Date;
    last_error: string | null;
  }>("select order_id, attempts, due_at, last_error from email_outbox order by due_at limit 20");
  for (const email of emails.rows) {
    run.options.log(
      `  stuck email ${email.order_id}: attempts ${email.attempts}, due ${email.due_at.toISOString()}` +
        `${email.last_error ? `, last error ${email.last_error.split("\n")[0]}` : ""}`,
    );
  }
  const orders = await run.cluster.pool.query<{
    order_id: string;
    resolve_attempts: number;
    next_resolve_at: Date;
  }>(
    "select order_id, resolve_attempts, next_resolve_at from orders where status = 'pending' order by created_at limit 20",
  );
  for (const order of orders.rows) {
    run.options.log(
      `  stuck order ${order.order_id}: resolver attempts ${order.resolve_attempts}, next look ${order.next_resolve_at.toISOString()}`,
    );
  }
  const jobs = await run.cluster.pool.query<{
    task_identifier: string;
    payload: unknown;
    attempts: number;
    max_attempts: number;
    locked_by: string | null;
    locked_at: Date | null;
    run_at: Date;
    last_error: string | null;
  }>(`
    select task_identifier, key as payload, attempts, max_attempts, locked_by, locked_at, run_at, last_error
    from graphile_worker.jobs order by run_at limit 20`);
  for (const job of jobs.rows) {
    run.options.log(
      `  stuck job ${job.task_identifier} ${JSON.stringify(job.payload)}: attempts ${job.attempts}/${job.max_attempts}, ` +
        `${job.locked_by ? `locked by ${job.locked_by} since ${job.locked_at?.toISOString()}` : "not locked"}, ` +
        `run_at ${job.run_at.toISOString()}${job.last_error ? `, last error ${job.last_error.split("\n")[0]}` : ""}`,
    );
  }
}

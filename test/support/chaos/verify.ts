// After the drain: what clients were told, reconciled and checked against the books.
import { createRng } from "../rng.ts";
import { observe, send, sendUntilAnswered } from "./client.ts";
import type { Run } from "./state.ts";

/** Learns the outcome of operations the client gave up on, and replays a sample of the others. */
export async function reconcile(run: Run): Promise<void> {
  const rng = createRng(run.options.seed, "reconcile");
  for (const operation of run.operations) {
    if (operation.final !== "unresolved") continue;
    run.stats.reconciled += 1;
    const path = operation.kind === "purchase" ? "/v1/orders/submit" : "/v1/orders/submit-topup";
    const headers: Record<string, string> =
      operation.idempotency_key === null ? {} : { "idempotency-key": operation.idempotency_key };
    const sent = await send(run, rng, "POST", path, {
      key: operation.partner.api_key,
      body: operation.body,
      headers,
    });
    const final = sent.answer ? observe(run, operation, sent.answer, path) : null;
    if (final) operation.final = final;
    else run.breach(`${operation.kind} op ${operation.op}: still no final answer after the drain`);
  }
}

/** What every client was told must be what the books say. */
export async function crossCheck(run: Run): Promise<void> {
  const orders = await run.cluster.pool.query<{
    order_id: string;
    partner_id: string;
    status: string;
    client_reference: string | null;
    total_minor: number;
    type: "esim" | "topup";
    iccid: string | null;
  }>("select order_id, partner_id, status, client_reference, total_minor, type, iccid from orders");
  // A refunded new eSIM took its completed top-ups with it (finish-refund.ts): refunded, not asked.
  const refundedEsims = new Set(
    orders.rows.filter((o) => o.type === "esim" && o.status === "refunded").map((o) => o.iccid),
  );
  const byReference = new Map<string, typeof orders.rows>();
  for (const order of orders.rows) {
    const key = `${order.partner_id} ${order.client_reference}`;
    byReference.set(key, [...(byReference.get(key) ?? []), order]);
  }
  for (const operation of run.operations) {
    const what = `${operation.kind} op ${operation.op} (${operation.client_reference})`;
    const found = byReference.get(`${operation.partner.partner_id} ${operation.client_reference}`) ?? [];
    const told = [...operation.order_ids];
    if (operation.final === "insufficient") {
      if (found.length > 0)
        run.breach(`${what}: told 402 but order ${found[0]!.order_id} exists (${found[0]!.status})`);
      continue;
    }
    if (operation.final === "unresolved") continue; // reported by reconcile
    const order = found[0];
    // Refused before any hold (the eSIM was refunded first, client.ts): no order is right.
    if (!order && operation.final === "failed" && operation.refused_before_order && told.length === 0)
      continue;
    if (!order) {
      run.breach(`${what}: told ${operation.final} (${told.join(", ")}) but no order exists`);
      continue;
    }
    // Told refunded: the order is refunded; told refused: it stays completed; unresolved (the client
    // gave up; the sweep finished it during the drain): either. A top-up nobody asked to refund
    // whose new eSIM was refunded: refunded with it (the audit flags a completed one left on the
    // cancelled profile).
    const expected =
      operation.refund === "refunded"
        ? ["refunded"]
        : operation.refund === "unresolved" || operation.refund === "requested"
          ? [operation.final, "refunded"]
          : operation.refund === "none" && order.type === "topup" && refundedEsims.has(order.iccid)
            ? [operation.final, "refunded"]
            : [operation.final];
    if (!expected.includes(order.status))
      run.breach(`${what}: told ${expected.join(" or ")} but order ${order.order_id} is ${order.status}`);
    if (told.length > 0 && !told.includes(order.order_id)) {
      run.breach(`${what}: told order ${told.join(", ")} but the books have ${order.order_id}`);
    }
  }
  // Each wallet, as the API shows it: credit minus completed orders, nothing held.
  const rng = createRng(run.options.seed, "cross-check");
  for (const partner of run.partners) {
    const spent = orders.rows
      .filter((o) => o.partner_id === partner.partner_id && o.status === "completed")
      .reduce((sum, o) => sum + o.total_minor, 0);
    const wallet = await sendUntilAnswered(run, rng, "GET", "/v1/profile/wallet", { key: partner.api_key });
    const available = wallet.body.balance?.amount_minor;
    const pending = wallet.body.pending?.amount_minor;
    if (available !== partner.credit_minor - spent || pending !== 0) {
      run.breach(
        `wallet of ${partner.name}: shows ${available} available and ${pending} pending, expected ` +
          `${partner.credit_minor - spent} (credited ${partner.credit_minor}, completed orders ${spent}) and 0`,
      );
    }
  }
}

/**
 * Webhooks after the drain: every committed event of a partner since its endpoint existed was
 * answered 2xx at least once, and every delivery verified with the endpoint's secret (standardwebhooks);
 * nothing was delivered that is not a committed event; and each order event agrees with the order
 * as committed (no order.completed for an order that is not completed: none for a rolled-back change).
 */
export async function checkWebhooks(run: Run): Promise<void> {
  const receiver = run.receiver;
  if (receiver === null) return;
  const events = await run.cluster.pool.query<{
    event_id: string;
    partner_id: string;
    type: string;
    order_id: string | null;
    order_status: string | null;
  }>(`
    select e.event_id, e.partner_id, e.type, e.data->>'orderID' as order_id, o.status as order_status
    from events e join webhook_endpoints w on w.partner_id = e.partner_id and w.created_at <= e.created_at
    left join orders o on o.order_id = e.data->>'orderID'`);
  const committed = new Map(events.rows.map((row) => [row.event_id, row]));
  const succeeded = receiver.succeeded().map((entry) => entry.id);
  const answered = new Set(succeeded);
  // An event answered 2xx twice was delivered again after its success: allowed after a SIGKILL
  // between the answer and its recording (at least once), counted so a run without kills can
  // insist on exactly once.
  run.stats.webhooks_repeated = succeeded.length - answered.size;
  for (const row of events.rows) {
    if (!answered.has(row.event_id))
      run.breach(`webhook: event ${row.event_id} (${row.type}) never answered 2xx`);
    // A completed order may have been refunded since (order.refunded, issue 13): still a committed completion.
    const expected =
      row.type === "order.completed"
        ? ["completed", "refunded"]
        : row.type === "order.failed"
          ? ["failed"]
          : row.type === "order.refunded"
            ? ["refunded"]
            : null;
    if (expected !== null && !expected.includes(row.order_status ?? "")) {
      run.breach(
        `webhook: ${row.type} ${row.event_id} for order ${row.order_id}, which is ${row.order_status}`,
      );
    }
  }
  for (const entry of receiver.received()) {
    if (!committed.has(entry.id)) run.breach(`webhook: delivered ${entry.id}, which is no committed event`);
    if (entry.verified_with.length === 0)
      run.breach(`webhook: ${entry.id} did not verify with the endpoint's secret`);
    if (entry.path !== committed.get(entry.id)?.partner_id)
      run.breach(`webhook: ${entry.id} went to another partner`);
  }
  const orders = await run.cluster.pool.query<{
    order_id: string;
    status: string;
    events: number;
    refunds: number;
  }>(`
    select o.order_id, o.status,
           count(e.event_id) filter (where e.type in ('order.completed', 'order.failed'))::int as events,
           count(e.event_id) filter (where e.type = 'order.refunded')::int as refunds
    from orders o left join events e on e.data->>'orderID' = o.order_id
    where o.status in ('completed', 'failed', 'refunded') group by o.order_id, o.status`);
  for (const order of orders.rows) {
    if (order.events !== 1)
      run.breach(`webhook: order ${order.order_id} (${order.status}) has ${order.events} order events`);
    if (order.refunds !== (order.status === "refunded" ? 1 : 0))
      run.breach(
        `webhook: order ${order.order_id} (${order.status}) has ${order.refunds} order.refunded events`,
      );
  }
  run.stats.webhooks_answered = answered.size;
}

// A purchase whose recording transaction PostgreSQL aborts after the carrier provisioned it (a
// statement cancelled by statement_timeout or an operator, a deadlock, a serialization failure) is
// answered 503 with Retry-After: 1, "retry with the same cart_key: it finishes what was started"
// (src/shared/database-busy.ts). The request that held the order's lease is gone by then, so the
// lease must go with it: kept, every retry got 409 request_in_progress until it ran out (the
// carrier's longest operation and a second: up to 61 s with ES2+), the resolver waited as long, and
// the process, alive, was never taken over. Through a service process and the carrier simulator.
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { balance, call, createWorld, newCart, newPartner, submit, waitFor } from "./support/world.ts";

// The resolver stays away: only the partner's retry may finish the order.
const world = await createWorld({ env: { RESOLVE_AFTER_MS: "600000" } });
const api = world.services[0]!.url;

test("a purchase's recording cancelled after the carrier answered: 503, and the retry at once finishes it", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const holder = new pg.Client({ connectionString: world.database.url });
  await holder.connect();
  await holder.query("begin");
  // The completion inserts the purchase: it waits here, after the carrier's answer.
  await holder.query("lock table purchases in access exclusive mode");
  const submitting = submit(api, partner.api_key, cart.cart_key);
  const waiting = async () => {
    const result = await world.database.pool.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = 'esim-api' and wait_event_type = 'Lock'",
    );
    return result.rows[0]?.pid ?? null;
  };
  const pid = await waitFor("the completion waiting for the lock", waiting);
  await world.database.pool.query("select pg_cancel_backend($1)", [pid]);
  const first = await submitting;
  await holder.query("rollback");
  await holder.end();
  assert.equal(first.status, 503, JSON.stringify(first.body));
  assert.equal(first.body.code, "service_unavailable");
  assert.equal(first.headers.get("retry-after"), "1");

  const retry = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(retry.status, 200, JSON.stringify(retry.body));
  assert.equal(retry.body.status, "completed");
  const orders = await call(api, "GET", `/v1/orders/${retry.body.orderID}`, { key: partner.api_key });
  assert.equal(orders.body.status, "completed");
});

test("a refund's recording cancelled after the carrier cancelled: 503, and the retry at once finishes it, credited once", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const bought = await submit(api, partner.api_key, cart.cart_key);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const order_id = bought.body.orderID as string;
  const holder = new pg.Client({ connectionString: world.database.url });
  await holder.connect();
  await holder.query("begin");
  // The refund's finish inserts the refund transfer: it waits here, after the carrier's cancel.
  await holder.query("lock table ledger_transfers in access exclusive mode");
  const refunding = call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  const waiting = async () => {
    const result = await world.database.pool.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = 'esim-api' and wait_event_type = 'Lock'",
    );
    return result.rows[0]?.pid ?? null;
  };
  const pid = await waitFor("the refund's finish waiting for the lock", waiting);
  await world.database.pool.query("select pg_cancel_backend($1)", [pid]);
  const first = await refunding;
  await holder.query("rollback");
  await holder.end();
  assert.equal(first.status, 503, JSON.stringify(first.body));
  assert.equal(first.body.code, "service_unavailable");

  const retry = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  assert.equal(retry.status, 200, JSON.stringify(retry.body));
  assert.equal(retry.body.status, "refunded");
  assert.equal(await balance(api, partner.api_key), 100_00, "credited exactly once");
});

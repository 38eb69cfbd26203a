// A crashed process's in-flight orders are taken over in seconds, not after their lease (issue 30).
// Two service processes on one database: a purchase or a top-up is in flight at the carrier on
// process A (the simulator sleeps on A's call), A is SIGKILLed, and process B is retried with the
// same cart (or Idempotency-Key) every 250 ms. The lease is made long (CARRIER_TIMEOUT_MS 60 s: 61 s)
// and the resolver's first look late (RESOLVE_AFTER_MS 65 s), so only a takeover of a dead holder
// (shared/liveness.ts) answers within the 30 s these tests wait. The times from the kill to the 200
// and to the order being final are printed, the worst last; what is asserted is exactly once: one
// order, one posted transfer, one provisioning (or top-up) at the carrier, a clean ledger.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { auditLedger } from "../src/wallet/audit-ledger.ts";
import { spawnNode, waitForOutput } from "./support/processes.ts";
import type { ServiceProcess } from "./support/service.ts";
import {
  type Answer,
  call,
  createWorld,
  END_USER,
  type Json,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld({
  services: 0,
  env: { CARRIER_TIMEOUT_MS: "60000", RESOLVE_AFTER_MS: "65000" },
});
const db = createKysely<Database>(world.database.pool);
/** Process B: survives every round. */
const survivor = await world.startService();
/** Long enough for A's call to be in flight whatever happens; cut short when the simulator stops. */
const SLOW_MS = 120_000;
/** The bound on each wait below: twice the issue's 15 s, and half the 61 s lease. */
const WAIT_MS = 30_000;
const ROUNDS = 3;

type Measured = { what: string; to_answer_ms: number; to_final_ms: number };
const measured: Measured[] = [];

after(() => {
  if (measured.length === 0) return;
  for (const m of measured) {
    console.log(
      `takeover ${m.what}: ${m.to_answer_ms} ms to the 200, ${m.to_final_ms} ms to the order final`,
    );
  }
  const worst = (key: "to_answer_ms" | "to_final_ms") => Math.max(...measured.map((m) => m[key]));
  console.log(
    `worst crash takeover over ${measured.length} kills: ${worst("to_answer_ms")} ms to the 200, ` +
      `${worst("to_final_ms")} ms to the order final`,
  );
});

type Order = { order_id: string; status: string; resolved_at: Date | null };

async function orderWhere(where: ReturnType<typeof sql>): Promise<Order | null> {
  const result = await sql<Order>`select order_id, status, resolved_at from orders where ${where}`.execute(
    db,
  );
  assert.ok(result.rows.length <= 1, "one order at most");
  return result.rows[0] ?? null;
}

/** Starts process A, runs `start` on it (a request left hanging at the carrier), and SIGKILLs A. */
async function crashMidCall(
  start: (doomed: ServiceProcess) => Promise<{ order: () => Promise<Order | null> }>,
): Promise<{ order_id: string; killed_at: number; killed_wall: number }> {
  const doomed = await world.startService();
  await world.simulator.control({ timeout_share: 1, slow_ms: SLOW_MS });
  const { order } = await start(doomed);
  const pending = await waitFor("the order pending on A", async () => {
    const found = await order();
    return found?.status === "pending" ? found : null;
  });
  // The pending order commits just before its carrier call goes out: let it reach the simulator.
  await sleep(500);
  // B's calls are answered at once; A's is asleep at the simulator, as when a carrier is slow.
  await world.simulator.control({ timeout_share: 0 });
  const killed_wall = Date.now();
  const killed_at = performance.now();
  await doomed.kill();
  return { order_id: pending.order_id, killed_at, killed_wall };
}

/** Retries on B every 250 ms until it answers 200; each answer before it must be 409 (being driven). */
async function retryUntil200(retry: () => Promise<Answer>): Promise<{ answer: Answer; at: number }> {
  return waitFor(
    "a retry on B to answer 200",
    async () => {
      const answer = await retry();
      if (answer.status === 200) return { answer, at: performance.now() };
      assert.equal(answer.status, 409, JSON.stringify(answer.body));
      assert.equal(answer.body.code, "request_in_progress");
      await sleep(250);
      return null;
    },
    WAIT_MS,
  );
}

async function assertExactlyOnce(order_id: string, kind: "provisionings" | "topups"): Promise<Order> {
  const order = await orderWhere(sql`order_id = ${order_id}`);
  assert.equal(order?.status, "completed");
  const transfers = await sql<{ state: string }>`
    select state from ledger_transfers where reference = ${order_id}`.execute(db);
  assert.deepEqual(transfers.rows, [{ state: "posted" }], "one charge");
  const audit = await world.simulator.audit();
  assert.equal(audit[kind].filter((row) => row.reference === order_id).length, 1, `one of ${kind}`);
  assert.deepEqual((await auditLedger(db)).breaches, []);
  return order!;
}

function record(what: string, killed: { killed_at: number; killed_wall: number }, at: number, order: Order) {
  const final_ms = new Date(order.resolved_at!).getTime() - killed.killed_wall;
  measured.push({ what, to_answer_ms: Math.round(at - killed.killed_at), to_final_ms: final_ms });
}

test("a purchase in flight on a SIGKILLed process is taken over by a retry on another process, once", async () => {
  const partner = await newPartner(survivor.url, 1_000_00);
  for (let round = 1; round <= ROUNDS; round++) {
    const cart = await newCart(survivor.url, partner.api_key);
    const killed = await crashMidCall(async (doomed) => {
      void submit(doomed.url, partner.api_key, cart.cart_key).catch(() => undefined);
      return { order: () => orderWhere(sql`cart_key = ${cart.cart_key}`) };
    });
    const { answer, at } = await retryUntil200(() => submit(survivor.url, partner.api_key, cart.cart_key));
    assert.equal(answer.body.orderID, killed.order_id);
    assert.equal(answer.body.status, "completed");
    record(`purchase ${round}`, killed, at, await assertExactlyOnce(killed.order_id, "provisionings"));
  }
});

test("a top-up in flight on a SIGKILLed process is taken over by a retry with its Idempotency-Key, once", async () => {
  const partner = await newPartner(survivor.url, 1_000_00);
  const cart = await newCart(survivor.url, partner.api_key);
  const bought = await submit(survivor.url, partner.api_key, cart.cart_key);
  assert.equal(bought.status, 200);
  const iccid: string = bought.body.purchases[0].iccid;
  const offers = await call(survivor.url, "GET", `/v1/orders/available-topups/${iccid}`, {
    key: partner.api_key,
  });
  const offer: Json = offers.body.data[0];
  const body = {
    iccid,
    package_id: offer.package_id,
    external_package_id: offer.external_package_id,
    ...END_USER,
  };
  for (let round = 1; round <= ROUNDS; round++) {
    const idempotency_key = `takeover-topup-${round}`;
    const topUp = (url: string) =>
      call(url, "POST", "/v1/orders/submit-topup", {
        key: partner.api_key,
        headers: { "idempotency-key": idempotency_key },
        body,
      });
    const known = new Set(
      (
        await sql<{ order_id: string }>`select order_id from orders where iccid = ${iccid}`.execute(db)
      ).rows.map((row) => row.order_id),
    );
    const killed = await crashMidCall(async (doomed) => {
      void topUp(doomed.url).catch(() => undefined);
      return {
        order: async () => {
          const rows = await sql<Order>`
            select order_id, status, resolved_at from orders where iccid = ${iccid} and type = 'topup'`.execute(
            db,
          );
          return rows.rows.find((row) => !known.has(row.order_id)) ?? null;
        },
      };
    });
    const { answer, at } = await retryUntil200(() => topUp(survivor.url));
    assert.equal(answer.body.orderID, killed.order_id);
    record(`top-up ${round}`, killed, at, await assertExactlyOnce(killed.order_id, "topups"));
  }
});

test("a refund in flight on a SIGKILLed process is taken over by a retry on another process, once", async () => {
  const partner = await newPartner(survivor.url, 100_00);
  const cart = await newCart(survivor.url, partner.api_key);
  const bought = await submit(survivor.url, partner.api_key, cart.cart_key);
  assert.equal(bought.status, 200);
  const order_id: string = bought.body.orderID;
  const refund = (url: string) =>
    call(url, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  const killed = await crashMidCall(async (doomed) => {
    void refund(doomed.url).catch(() => undefined);
    return {
      order: async () => {
        const rows = await sql<{ state: string }>`
          select state from order_refunds where order_id = ${order_id}`.execute(db);
        // The order stays completed while its refund is refunding: report the intent as pending.
        return rows.rows[0]?.state === "refunding"
          ? { order_id, status: "pending", resolved_at: null }
          : null;
      },
    };
  });
  const { answer, at } = await retryUntil200(() => refund(survivor.url));
  assert.equal(answer.body.status, "refunded");
  const refunded = await sql<{ refunded_at: Date; credits: number }>`
    select r.refunded_at,
           (select count(*)::int from ledger_transfers t where t.reference = r.order_id and t.kind = 'refund') as credits
    from order_refunds r where r.order_id = ${order_id} and r.state = 'refunded'`.execute(db);
  assert.equal(refunded.rows[0]?.credits, 1, "credited once");
  const audit = await world.simulator.audit();
  assert.equal(audit.cancellations.filter((row) => row.reference === order_id).length, 1, "cancelled once");
  assert.deepEqual((await auditLedger(db)).breaches, []);
  record("refund", killed, at, { order_id, status: "refunded", resolved_at: refunded.rows[0]!.refunded_at });
});

test("with nobody retrying, the resolver sweep of another process finishes a SIGKILLed process's order", async () => {
  const partner = await newPartner(survivor.url, 100_00);
  const cart = await newCart(survivor.url, partner.api_key);
  const killed = await crashMidCall(async (doomed) => {
    void submit(doomed.url, partner.api_key, cart.cart_key).catch(() => undefined);
    return { order: () => orderWhere(sql`cart_key = ${cart.cart_key}`) };
  });
  const final = await waitFor(
    "the sweep on B to finish the order",
    async () => {
      const order = await orderWhere(sql`order_id = ${killed.order_id}`);
      return order?.status === "completed" ? { order, at: performance.now() } : null;
    },
    WAIT_MS,
  );
  const order = await assertExactlyOnce(killed.order_id, "provisionings");
  // Nobody is answered here: the first time is when polling saw the order completed.
  record("purchase by B's resolver sweep, nobody retrying", killed, final.at, order);
});

test("an order whose holder is alive is not taken over while its carrier call runs past the liveness window", async () => {
  const other = await world.startService();
  const partner = await newPartner(survivor.url, 100_00);
  const cart = await newCart(survivor.url, partner.api_key);
  // Longer than three missed heartbeats (6 s): a takeover by a wrong liveness rule would show here.
  await world.simulator.control({ timeout_share: 1, slow_ms: 9_000 });
  const started = performance.now();
  let held = true;
  const first = submit(survivor.url, partner.api_key, cart.cart_key).finally(() => {
    held = false;
  });
  const pending = await waitFor("the order pending", async () => {
    const order = await orderWhere(sql`cart_key = ${cart.cart_key}`);
    return order?.status === "pending" ? order : null;
  });
  await world.simulator.control({ timeout_share: 0 });
  // Each retry on the other process answered while the holder's call still ran: all must be 409.
  const while_held: number[] = [];
  while (held) {
    const status = (await submit(other.url, partner.api_key, cart.cart_key)).status;
    if (held) while_held.push(status);
    await sleep(250);
  }
  const answer = await first;
  console.log(
    `live holder: ${while_held.length} retries on another process in ${Math.round(performance.now() - started)} ms`,
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.ok(while_held.length > 1);
  // The last may have been answered between the completion and the holder's answer reaching us.
  assert.deepEqual(
    while_held.slice(0, -1).filter((status) => status !== 409),
    [],
    "retries wait for the live holder",
  );
  await assertExactlyOnce(pending.order_id, "provisionings");
});

test("a worker-only process beats too (its leases are not taken from it) and takes no share of the rate limit", async () => {
  const worker = spawnNode({
    name: "worker",
    script: "src/main.ts",
    env: { ...world.env, ROLE: "worker", LOG_LEVEL: "info" },
  });
  try {
    await waitForOutput(worker, /(eSIM ordering worker running)/, 30_000);
    const rows = await sql<{ process_id: string; serves_api: boolean }>`
      select process_id, serves_api from api_processes where process_id like ${`%:${worker.pid}:%`}`.execute(
      db,
    );
    assert.deepEqual(
      rows.rows.map((row) => row.serves_api),
      [false],
      "one heartbeat row, not serving the API",
    );
    // Two beats later (every 2 s) the survivor has counted again: the worker is not among its sharers.
    await sleep(4_500);
    const live_api = await sql<{ live: number }>`
      select count(*)::int as live from api_processes
      where serves_api and seen_at >= now() - interval '6 seconds'`.execute(db);
    const metrics = await (await fetch(`${survivor.url}/metrics`)).text();
    const shared_by = Number(/^esim_rate_limit_processes (\d+)$/m.exec(metrics)?.[1]);
    assert.equal(shared_by, live_api.rows[0]!.live);
  } finally {
    await worker.stop(5_000);
  }
});

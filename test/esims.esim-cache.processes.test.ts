// The per-process cache of rendered eSIMs (src/esims/esim-cache.ts) across two real service
// processes: a change applied in one process is what the other serves next (esim_changed NOTIFY),
// the writing process reads its own change at once, another partner never gets the cached body,
// the cache stays bounded and drops a load that a change overtook, and a "not found" read before a
// purchase committed is not shared with a read that came after it (a database error is).
import assert from "node:assert/strict";
import { test } from "node:test";
import { EsimCache } from "../src/esims/esim-cache.ts";
import { getEsim } from "../src/esims/get-esim.ts";
import { ApiError } from "../src/shared/errors.ts";
import { topUpBody } from "./support/fixtures.ts";
import { call, createWorld, type Json, newCart, newPartner, submit, waitFor } from "./support/world.ts";

const world = await createWorld({
  services: 2,
  env: { CARRIER_CALLBACK_TOKEN: "callback-token-0123456789abcdef", USAGE_SYNC_MAX_PER_SECOND: "0" },
});
const [api1, api2] = world.services.map((s) => s.url) as [string, string];
const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };
/** A NOTIFY reaches the other process within milliseconds; this is only a bound for a loaded machine. */
const NOTIFY_WAIT_MS = 2_000;

async function esimBought(): Promise<{ api_key: string; partner_id: string; iccid: string }> {
  const partner = await newPartner(api1, 1_000_00);
  const cart = await newCart(api1, partner.api_key, "fr-1gb-7d");
  const order = await submit(api1, partner.api_key, cart.cart_key);
  assert.equal(order.status, 200, JSON.stringify(order.body));
  return { ...partner, iccid: order.body.purchases[0].iccid };
}

async function read(url: string, key: string, iccid: string): Promise<Json> {
  const answer = await call(url, "GET", `/v1/esims/${iccid}`, { key });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

test("a signal applied in one process is what the other process serves next; the writer sees it at once", async () => {
  const esim = await esimBought();
  assert.equal((await read(api2, esim.api_key, esim.iccid)).status, "released"); // fills process 2's cache
  assert.equal((await read(api2, esim.api_key, esim.iccid)).status, "released");
  assert.equal((await read(api1, esim.api_key, esim.iccid)).status, "released"); // and process 1's

  const simulated = await call(api1, "POST", `/v1/sandbox/esims/${esim.iccid}/simulate`, {
    key: esim.api_key,
    body: { event: "install" },
  });
  assert.equal(simulated.status, 200, JSON.stringify(simulated.body));
  assert.equal((await read(api1, esim.api_key, esim.iccid)).status, "installed", "the writer, at once");
  const other = await waitFor(
    "process 2 serves the installed eSIM",
    async () => {
      const body = await read(api2, esim.api_key, esim.iccid);
      return body.status === "installed" ? body : null;
    },
    NOTIFY_WAIT_MS,
  );
  assert.ok(other.installed_at);
  assert.deepEqual(other, await read(api1, esim.api_key, esim.iccid));
});

test("a top-up's new bundle shows at once in the process that sold it, and soon in the other", async () => {
  const esim = await esimBought();
  assert.equal((await read(api1, esim.api_key, esim.iccid)).bundles.length, 1);
  assert.equal((await read(api2, esim.api_key, esim.iccid)).bundles.length, 1);
  const topup = await call(api1, "POST", "/v1/orders/submit-topup", {
    key: esim.api_key,
    body: topUpBody(esim.iccid, TOPUP),
  });
  assert.equal(topup.status, 200, JSON.stringify(topup.body));
  const after = await read(api1, esim.api_key, esim.iccid);
  assert.deepEqual(
    after.bundles.map((b: Json) => [b.order_id, b.package_id]),
    [
      [after.order_id, "fr-1gb-7d"],
      [topup.body.orderID, TOPUP.package_id],
    ],
  );
  await waitFor(
    "process 2 serves the top-up's bundle",
    async () => (await read(api2, esim.api_key, esim.iccid)).bundles.length === 2,
    NOTIFY_WAIT_MS,
  );
});

test("a purchase's completion notifies no esim_changed (no process can hold its new eSIM), a top-up's once", async () => {
  const listener = await world.database.pool.connect();
  const notices: string[] = [];
  listener.on("notification", (notice) => notices.push(notice.payload ?? ""));
  try {
    await listener.query("listen esim_changed");
    const esim = await esimBought();
    const topup = await call(api1, "POST", "/v1/orders/submit-topup", {
      key: esim.api_key,
      body: topUpBody(esim.iccid, TOPUP),
    });
    assert.equal(topup.status, 200, JSON.stringify(topup.body));
    // Notices arrive in commit order: once the marker is in, every earlier one is.
    await world.database.pool.query("select pg_notify('esim_changed', 'marker')");
    await waitFor("the marker notice", async () => notices.includes("marker"), NOTIFY_WAIT_MS);
    assert.deepEqual(
      notices.filter((payload) => payload === esim.iccid),
      [esim.iccid],
      "one notice, the top-up's",
    );
    assert.equal((await read(api2, esim.api_key, esim.iccid)).bundles.length, 2);
  } finally {
    await listener.query("unlisten esim_changed");
    listener.release();
  }
});

test("another partner gets 404 esim_not_found for an eSIM whose owner's read filled the cache", async () => {
  const esim = await esimBought();
  const stranger = await newPartner(api1, 0, "Stranger");
  for (const url of [api1, api2]) {
    await read(url, esim.api_key, esim.iccid);
    const answer = await call(url, "GET", `/v1/esims/${esim.iccid}`, { key: stranger.api_key });
    assert.equal(answer.status, 404);
    assert.equal(answer.body.code, "esim_not_found");
    assert.ok(!JSON.stringify(answer.body).includes("LPA:"), "nothing of the eSIM leaks");
  }
  assert.equal((await read(api2, esim.api_key, esim.iccid)).iccid, esim.iccid, "the owner still reads it");
});

test("the cache keeps at most its bound, least recently used out first, and drops a load a change overtook", async () => {
  const pool = world.database.pool;
  const esims = [await esimBought(), await esimBought(), await esimBought()];
  const partner_of = new Map(esims.map((esim) => [esim.iccid, esim.partner_id]));
  const cache = new EsimCache(2, 60_000);
  let loads = 0;
  const body = async (iccid: string) => {
    const partner_id = partner_of.get(iccid)!;
    return cache.body(partner_id, iccid, async () => {
      loads++;
      return Buffer.from(JSON.stringify(await getEsim(pool, partner_id, iccid, "http://localhost")));
    });
  };
  const [a, b, c] = esims.map((esim) => esim.iccid) as [string, string, string];
  await body(a);
  await body(b);
  await body(a); // a is now the most recently used
  assert.equal(loads, 2);
  await body(c); // evicts b
  assert.equal(cache.size, 2);
  assert.equal(loads, 3);
  await body(a);
  assert.equal(loads, 3, "a stayed");
  await body(b);
  assert.equal(loads, 4, "b was evicted");
  assert.equal(cache.size, 2);

  const overtaken = body(c);
  cache.changed(c);
  await overtaken;
  const loads_before = loads;
  await body(c);
  assert.equal(loads, loads_before + 1, "what a load read before the change was not kept");
});

test("a read joining a load that finds nothing runs its own query; a database error is shared", async () => {
  const esim = await esimBought();
  const joined = (first_fails_with: Error) => {
    // A cache of its own each time: nothing cached or running from the case before.
    const cache = new EsimCache(10, 60_000);
    // The first read's query ran before the purchase committed: it will find nothing.
    let answerFirst: (error: Error) => void = () => undefined;
    const first = Promise.resolve(
      cache.body(
        esim.partner_id,
        esim.iccid,
        () =>
          new Promise<Buffer>((_, reject) => {
            answerFirst = reject;
          }),
      ),
    );
    // Reported by the `assert.rejects` below, not as an unhandled rejection meanwhile.
    first.catch(() => undefined);
    // A second read, after the purchase was answered, comes in while the first query runs.
    const own = { queries: 0 };
    const second = Promise.resolve(
      cache.body(esim.partner_id, esim.iccid, async () => {
        own.queries++;
        return Buffer.from(
          JSON.stringify(await getEsim(world.database.pool, esim.partner_id, esim.iccid, "http://localhost")),
        );
      }),
    );
    second.catch(() => undefined);
    answerFirst(first_fails_with);
    return { first, second, own };
  };

  const not_found = joined(new ApiError("esim_not_found"));
  await assert.rejects(not_found.first, { code: "esim_not_found" });
  assert.equal(JSON.parse((await not_found.second).toString()).iccid, esim.iccid, "the second read finds it");
  assert.equal(not_found.own.queries, 1);
  // Any other failure (the database's) is shared: it does not multiply the queries.
  const busy = joined(new Error("the database is busy"));
  await assert.rejects(busy.first, /busy/);
  await assert.rejects(busy.second, /busy/);
  assert.equal(busy.own.queries, 0);
});

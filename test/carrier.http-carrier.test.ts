// The HTTP carrier adapter's connections (src/carrier/carrier-api/http-carrier.ts): kept alive between calls,
// and a kept-alive connection the carrier closed just as it was reused is asked again on a new one.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";

const PROFILE = {
  iccid: "89014103211118510720",
  smdp_address: "smdp.example.com",
  activation_code: "K2-ABC",
};
const request = {
  reference: "ord_keepalive",
  external_package_id: "pkg",
  data_mb: 1024,
  validity_days: 7,
  start_date: null,
  end_user_email: "a@example.com",
};

type Drop = "no answer" | "mid-answer";

/** A carrier that answers on kept-alive connections, and may drop the n-th request of a connection. */
async function carrier(drop_request_on_connection: number | null, drop: Drop = "no answer") {
  const seen: Array<{ connection: number; number_on_it: number }> = [];
  const counts = new WeakMap<object, { id: number; n: number }>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    let entry = counts.get(req.socket);
    if (!entry) {
      entry = { id: ++connections, n: 0 };
      counts.set(req.socket, entry);
    }
    entry.n += 1;
    seen.push({ connection: entry.id, number_on_it: entry.n });
    req.resume();
    req.on("end", () => {
      // Closed with no answer, as a carrier's idle timeout meeting a reused connection looks.
      if (entry.n === drop_request_on_connection && drop === "no answer") return req.socket.destroy();
      if (entry.n === drop_request_on_connection) {
        // Headers and half a body, then the connection is gone: an answer had begun.
        res.writeHead(200, { "content-type": "application/json", "content-length": "400" });
        res.write(JSON.stringify(PROFILE).slice(0, 20));
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(PROFILE));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    adapter: new HttpCarrier({ base_url: `http://127.0.0.1:${port}`, api_key: "k", timeout_ms: 2_000 }),
  };
}

test("calls reuse one kept-alive connection", async () => {
  const { seen, adapter } = await carrier(null);
  for (let i = 0; i < 3; i++) assert.equal((await adapter.provisionProfile(request)).kind, "ok");
  assert.deepEqual(
    seen.map((s) => s.connection),
    [1, 1, 1],
  );
});

test("a reused connection closed without an answer is asked again on a new one: the call succeeds", async () => {
  const { seen, adapter } = await carrier(2);
  assert.equal((await adapter.provisionProfile(request)).kind, "ok");
  const second = await adapter.provisionProfile(request);
  assert.deepEqual(second, { kind: "ok", value: PROFILE });
  assert.deepEqual(seen, [
    { connection: 1, number_on_it: 1 },
    { connection: 1, number_on_it: 2 },
    { connection: 2, number_on_it: 1 },
  ]);
});

test("a new connection closed without an answer is not asked again: the outcome is unavailable", async () => {
  const { seen, adapter } = await carrier(1);
  const outcome = await adapter.provisionProfile(request);
  assert.equal(outcome.kind, "unavailable");
  assert.equal(seen.length, 1, "asked once");
});

test("a reused connection reset after the answer began is not asked again: unavailable", async () => {
  const { seen, adapter } = await carrier(2, "mid-answer");
  assert.equal((await adapter.provisionProfile(request)).kind, "ok");
  assert.equal((await adapter.provisionProfile(request)).kind, "unavailable");
  assert.equal(seen.length, 2, "asked once each");
});

test("sandbox simulate is never asked again, even on a reused connection closed without an answer", async () => {
  const { seen, adapter } = await carrier(2);
  assert.equal((await adapter.provisionProfile(request)).kind, "ok");
  const outcome = await adapter.simulate(PROFILE.iccid, { event: "use_data", data_mb: 100 });
  assert.equal(outcome.kind, "unavailable");
  assert.equal(seen.length, 2, "a use_data sent once");
});

test("an answer streamed past 64 KiB is refused as too large, not as cut off", async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    for (let i = 0; i < 100; i++) res.write("x".repeat(1_024));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const adapter = new HttpCarrier({ base_url: `http://127.0.0.1:${port}`, api_key: "k", timeout_ms: 2_000 });
  assert.deepEqual(await adapter.provisionProfile(request), {
    kind: "unavailable",
    reason: "carrier answer exceeds 65536 bytes",
  });
});

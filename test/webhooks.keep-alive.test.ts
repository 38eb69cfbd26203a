// Webhook attempts reuse connections (send-webhook.ts): sequential deliveries to one receiver go
// over one TCP connection, a kept connection the receiver reset before answering is asked again
// once on a new one, and a receiver slower than the idle limit is still waited for.
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { type TestContext, test } from "node:test";
import { KEEP_ALIVE_IDLE_MS, keptAliveAgent, sendWebhook } from "../src/webhooks/send-webhook.ts";

/** Listens on loopback; the server and its connections are closed when the test ends, failed or not. */
async function listen(t: TestContext, server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return (server.address() as net.AddressInfo).port;
}

/** A receiver answering 204 to everything, counting the connections it accepted. */
async function countingReceiver(t: TestContext): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(204).end());
  });
  server.on("connection", () => connections++);
  return { port: await listen(t, server), connections: () => connections };
}

const send = (url: string, timeout_ms = 5_000) =>
  sendWebhook({ url, headers: {}, body: '{"id":"evt_k"}', timeout_ms, allow_private: true });

test("sequential deliveries to one receiver go over one kept connection", async (t) => {
  const { port, connections } = await countingReceiver(t);
  for (let n = 0; n < 5; n++) {
    assert.deepEqual(await send(`http://127.0.0.1:${port}/hooks/a`), { kind: "succeeded", status: 204 });
  }
  assert.equal(connections(), 1);
});

test("a kept connection reset before any answer is asked again once, on a new connection", async (t) => {
  // A receiver that answers the first request of a connection and resets it at the second.
  let connections = 0;
  let requests = 0;
  const server = net.createServer((socket) => {
    connections++;
    let seen = 0;
    socket.on("data", (chunk) => {
      if (!chunk.includes("\r\n\r\n")) return; // the whole head and the small body come together here
      requests++;
      if (++seen === 2) return socket.resetAndDestroy();
      socket.write("HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
    });
  });
  const port = await listen(t, server);
  const url = `http://127.0.0.1:${port}/hooks/b`;
  assert.deepEqual(await send(url), { kind: "succeeded", status: 204 });
  assert.deepEqual(await send(url), { kind: "succeeded", status: 204 });
  assert.equal(requests, 3, "the reset request, then the same one again");
  assert.equal(connections, 2);
});

test("an answer slower than the idle limit of kept connections is waited for", async (t) => {
  const server = http.createServer((request, response) => {
    request.resume();
    setTimeout(() => response.writeHead(200).end("ok"), KEEP_ALIVE_IDLE_MS + 500);
  });
  const port = await listen(t, server);
  const answer = await send(`http://127.0.0.1:${port}/hooks/c`, KEEP_ALIVE_IDLE_MS + 3_000);
  assert.deepEqual(answer, { kind: "succeeded", status: 200 });
});

test("a kept connection past its age is closed once free, and the next attempt opens a new one", async (t) => {
  const { port, connections } = await countingReceiver(t);
  const agent = keptAliveAgent(http, true, 150);
  t.after(() => agent.destroy());
  const post = () =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(`http://127.0.0.1:${port}/`, { method: "POST", agent }, (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      });
      request.on("error", reject);
      request.end("{}");
    });
  assert.equal(await post(), 204);
  assert.equal(await post(), 204);
  assert.equal(connections(), 1, "young: reused");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(await post(), 204, "still answered on the kept connection, which is then closed");
  assert.equal(await post(), 204);
  assert.equal(connections(), 2, "past its age: a new connection");
});

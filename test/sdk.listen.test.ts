// `esim-partner listen` as a partner runs it on a laptop: the packed SDK installed from its tarball,
// `npx esim-partner listen` against a real sandbox service, purchases made over HTTP, and a real
// local receiver that verifies each forwarded event with the `standardwebhooks` package (not the
// SDK's own code) under the secret the command printed. Stopped with Ctrl-C (SIGINT) and started
// again, it forwards what was recorded meanwhile, and nothing twice.
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { createTestDatabase } from "./support/db.ts";
import { createCart, createPartner, submitCart } from "./support/fixtures.ts";
import { freePort } from "./support/ports.ts";
import { type NodeChild, spawnProcess, waitForOutput } from "./support/processes.ts";
import { packAndInstallSdk } from "./support/sdk-tarball.ts";
import { startServiceProcess } from "./support/service.ts";

const ADMIN_TOKEN = "listen-admin-token-0123456789";
// Once for the file, removed after its tests.
const sdk = packAndInstallSdk();

type Delivery = { id: string; type: string; order_id: string | null; verified: boolean };

/** A receiver as a partner would write one: verify, then answer 204 (or 400 when it does not verify). */
async function startReceiver(port = 0) {
  let secret: string | null = null;
  const deliveries: Delivery[] = [];
  const server = http.createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    let event: { id: string; type: string; data: { orderID?: string } } | null = null;
    try {
      event = new Webhook(secret!).verify(body, request.headers as Record<string, string>) as typeof event;
    } catch {}
    const parsed = JSON.parse(body);
    deliveries.push({
      id: parsed.id,
      type: parsed.type,
      order_id: parsed.data?.orderID ?? null,
      verified: event !== null,
    });
    response.writeHead(event ? 204 : 400).end();
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    setSecret: (value: string) => {
      secret = value;
    },
  };
}

/**
 * A command as a terminal runs it: in a process group of its own, so Ctrl-C (ctrlC) reaches npx and
 * the node it started, as the terminal's SIGINT does. Without npm's variables of this test run.
 */
function startInTerminal(command: string[], cwd: string, env: Record<string, string>): NodeChild {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_")));
  const child = spawn(command[0]!, command.slice(1), { cwd, env: { ...clean, ...env }, detached: true });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  // Once every process holding its output is gone: npx dies of the SIGINT, node exits after it.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
    return exited;
  };
  after(kill);
  return {
    name: command.join(" "),
    process: child as ChildProcessWithoutNullStreams,
    pid: child.pid!,
    output: () => output,
    exited,
    stop: kill,
    kill,
  };
}

function ctrlC(child: NodeChild): void {
  process.kill(-child.pid, "SIGINT");
}

async function waitUntil<T>(what: string, probe: () => T | undefined, timeout_ms = 30_000): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("listen forwards each purchase to a local receiver, signed for standardwebhooks, and resumes after Ctrl-C", async () => {
  const installed = JSON.parse(
    readFileSync(path.join(sdk.scratch, "node_modules/@esim-partner/sdk/package.json"), "utf8"),
  );
  assert.equal(installed.dependencies, undefined, "no runtime dependencies");
  assert.equal(installed.bin["esim-partner"], "dist/esm/cli/main.js");

  const database = await createTestDatabase();
  const data_dir = mkdtempSync(path.join(os.tmpdir(), "listen-"));
  after(() => rmSync(data_dir, { recursive: true, force: true }));
  const service = await startServiceProcess({
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    DATA_DIR: data_dir,
  });
  after(() => service.stop());
  const partner = await createPartner(service.url, { admin_token: ADMIN_TOKEN, credit_minor: 10_000 });
  const buy = async () => {
    const cart = await createCart(service.url, partner.api_key, "fr-1gb-7d");
    const answer = await submitCart(service.url, partner.api_key, cart.cart_key as string);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.orderID as string;
  };
  const receiver = await startReceiver();
  const env = { API_KEY: partner.api_key, BASE: service.url, npm_config_offline: "true" };
  const startListen = async (): Promise<{ child: NodeChild; secret: string }> => {
    const child = startInTerminal(
      ["npx", "esim-partner", "listen", "--forward-to", receiver.url],
      sdk.scratch,
      env,
    );
    const secret = await waitForOutput(child, /Signing secret: (whsec_\S+)/, 60_000);
    await waitForOutput(child, /(Ready)\./, 60_000);
    return { child, secret };
  };

  // The credit before the first start is history: only what comes after is sent.
  const first = await startListen();
  assert.match(first.child.output(), /Starting from now/);
  receiver.setSecret(first.secret);
  const order_1 = await buy();
  const completed_1 = await waitUntil("order 1 forwarded", () =>
    receiver.deliveries.find((d) => d.type === "order.completed" && d.order_id === order_1),
  );
  assert.equal(completed_1.verified, true, "standardwebhooks verifies it with the printed secret");
  await waitUntil("the line for order 1", () =>
    first.child.output().includes(`order.completed  ${completed_1.id}  -> 204`) ? true : undefined,
  );
  assert.ok(!receiver.deliveries.some((d) => d.type === "wallet.credited"), "no event from before the start");

  // Ctrl-C: a clean exit, the position kept in the state file of the directory it ran in.
  ctrlC(first.child);
  await first.child.exited;
  assert.match(first.child.output(), /Stopped\.\n$/);
  const state_file = path.join(sdk.scratch, ".esim-partner-listen.json");
  assert.ok(existsSync(state_file));
  assert.ok(!readFileSync(state_file, "utf8").includes(partner.api_key), "the key is not written down");

  // Bought while nobody listened: forwarded on the next start, with the same secret; order 1 is not sent again.
  const order_2 = await buy();
  const second = await startListen();
  assert.equal(second.secret, first.secret, "the receiver's secret keeps working across restarts");
  assert.match(second.child.output(), /Resuming after/);
  const completed_2 = await waitUntil("order 2 forwarded", () =>
    receiver.deliveries.find((d) => d.type === "order.completed" && d.order_id === order_2),
  );
  assert.equal(completed_2.verified, true);
  const order_3 = await buy();
  await waitUntil("order 3 forwarded", () =>
    receiver.deliveries.find((d) => d.type === "order.completed" && d.order_id === order_3),
  );
  const ids = receiver.deliveries.map((d) => d.id);
  assert.equal(new Set(ids).size, ids.length, `each event once: ${ids.join(" ")}`);
  assert.ok(receiver.deliveries.every((d) => d.verified));
  ctrlC(second.child);
  await second.child.exited;
  assert.match(second.child.output(), /Stopped\.\n$/);
});

test("listen refuses a missing receiver URL with its usage, exit status 2, nothing written", async () => {
  const elsewhere = mkdtempSync(path.join(os.tmpdir(), "listen-usage-"));
  after(() => rmSync(elsewhere, { recursive: true, force: true }));
  const child = spawnProcess({
    name: "listen",
    command: path.join(sdk.scratch, "node_modules/.bin/esim-partner"),
    args: ["listen"],
    cwd: elsewhere,
    env: { API_KEY: "sand_x", BASE: "http://127.0.0.1:9" },
  });
  assert.equal(await child.exited, 2);
  assert.match(child.output(), /--forward-to is required/);
  assert.match(child.output(), /Usage: esim-partner listen/);
  assert.ok(!existsSync(path.join(elsewhere, ".esim-partner-listen.json")));
});

test("an event whose receiver does not answer yet is tried again until it does, then counted once", async () => {
  const database = await createTestDatabase();
  const data_dir = mkdtempSync(path.join(os.tmpdir(), "listen-late-"));
  after(() => rmSync(data_dir, { recursive: true, force: true }));
  const service = await startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN, DATA_DIR: data_dir });
  after(() => service.stop());
  const partner = await createPartner(service.url, { admin_token: ADMIN_TOKEN });
  const port = await freePort();
  const state = path.join(data_dir, "listen-state.json");
  const secret = `whsec_${Buffer.from("a local secret of 32 bytes long!").toString("base64")}`;
  const child = startInTerminal(
    [
      path.join(sdk.scratch, "node_modules/.bin/esim-partner"),
      "listen",
      "--forward-to",
      `http://127.0.0.1:${port}/hooks`,
      "--state",
      state,
      "--secret",
      secret,
    ],
    data_dir,
    { API_KEY: partner.api_key, BASE: service.url },
  );
  await waitForOutput(child, /(Ready)\./, 60_000);
  const credited = await fetch(`${service.url}/admin/partners/${partner.partner_id}/wallet/credits`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ amount_minor: 500, reference: "late-receiver" }),
  });
  assert.equal(credited.status, 201);
  await waitForOutput(child, /wallet\.credited {2}\S+ {2}-> (no answer)/, 30_000);
  const receiver = await startReceiver(port);
  receiver.setSecret(secret);
  const delivery = await waitUntil("the credit forwarded once the receiver is up", () =>
    receiver.deliveries.find((d) => d.type === "wallet.credited"),
  );
  assert.equal(delivery.verified, true, "signed with the --secret given");
  await waitUntil("the line with its status", () => (child.output().includes("-> 204") ? true : undefined));
  assert.equal(
    JSON.parse(readFileSync(state, "utf8")).seen.at(-1).id,
    delivery.id,
    "kept in the --state file",
  );
  ctrlC(child);
  await child.exited;
  assert.equal(receiver.deliveries.length, 1);
});

// The SDK's eSIM and wallet resources (packages/sdk) against the real service, its carrier
// simulator and PostgreSQL, some calls through the real fault proxy: eSIM lists as async
// iterators with filters, one eSIM, its QR image as PNG bytes that decode to its LPA string,
// sandbox simulate (never retried), the wallet statement as JSON pages and as CSV text, and the
// low-balance alert.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import {
  type CompletedPurchase,
  ConnectionError,
  type Esim,
  EsimClient,
  type EsimStatus,
  isApiError,
  type Order,
  type WalletTransaction,
} from "../packages/sdk/src/index.ts";
import { startFaultProxy } from "./support/fault-proxy.ts";
import { creditWallet, PACKAGE_ID } from "./support/fixtures.ts";
import { ADMIN_TOKEN, createWorld, END_USER, newPartner } from "./support/world.ts";

const world = await createWorld();
const api = world.services[0]!.url;
const proxy = await startFaultProxy(api);
const scratch = await mkdtemp(path.join(tmpdir(), "sdk-esims-"));
after(() => rm(scratch, { recursive: true, force: true }));

async function partnerClient(credit_minor: number) {
  const partner = await newPartner(api, credit_minor);
  return { ...partner, client: new EsimClient({ apiKey: partner.api_key, baseUrl: proxy.url }) };
}

async function buy(client: EsimClient, client_reference?: string): Promise<Order> {
  const cart = await client.carts.create({ package_id: PACKAGE_ID });
  return client.orders.submit({ cart_key: cart.cart_key, ...END_USER, client_reference });
}

/** The eSIM of a single purchase: narrowed on `status`, as the SDK's Purchase union asks. */
function esimOf(order: Order): CompletedPurchase {
  const first = order.purchases[0];
  if (first?.status !== "completed") throw new Error(`order ${order.orderID} made no eSIM`);
  return first;
}

const iccidOf = (order: Order) => esimOf(order).iccid;

async function decodeQr(png: Uint8Array): Promise<string> {
  const file = path.join(scratch, `${crypto.randomUUID()}.png`);
  await writeFile(file, png);
  const { stdout } = await promisify(execFile)("zbarimg", ["--quiet", "--raw", file]);
  return stdout.replace(/\n$/, "");
}

test("esims.list iterates every page newest first, with status and client_reference filters", async () => {
  const { client } = await partnerClient(100_00);
  const orders: Order[] = [];
  for (let i = 0; i < 5; i++) orders.push(await buy(client, i % 2 === 0 ? "even" : "odd"));
  const iccids = orders.map(iccidOf);

  const before = proxy.seen("GET", "/v1/esims").length;
  const all: Esim[] = [];
  for await (const esim of client.esims.list({ limit: 2 })) all.push(esim);
  assert.deepEqual(
    all.map((e) => e.iccid),
    [...iccids].reverse(),
  );
  assert.equal(proxy.seen("GET", "/v1/esims").length - before, 3, "three pages of two");

  const even = await client.esims.list({ client_reference: "even" }).toArray();
  assert.deepEqual(
    even.map((e) => e.iccid),
    [iccids[4], iccids[2], iccids[0]],
  );
  assert.equal((await client.esims.list().toArray({ limit: 3 })).length, 3, "toArray stops at its bound");

  const installed = await client.esims.simulate(iccids[1]!, { event: "install" });
  const status: EsimStatus = installed.status;
  assert.equal(status, "installed");
  const listed = await client.esims.list({ status: "installed" }).toArray();
  assert.deepEqual(
    listed.map((e) => [e.iccid, e.status]),
    [[iccids[1], "installed"]],
  );
  const page = await client.esims.page({ limit: 1, status: "released" });
  assert.equal(page.data.length, 1);
  assert.equal(page.has_more, true);
  assert.equal(typeof page.next_cursor, "string");
});

test("esims.get and esims.qrPng: the eSIM with its install kit, and PNG bytes that decode to its LPA string", async () => {
  const { client } = await partnerClient(10_00);
  const order = await buy(client, "trip-9");
  const esim = await client.esims.get(iccidOf(order));
  assert.equal(esim.order_id, order.orderID);
  assert.equal(esim.client_reference, "trip-9");
  assert.equal(esim.status, "released");
  assert.equal(esim.installation.qr_code, esimOf(order).qr_code);
  assert.equal(esim.bundles[0]!.package_id, PACKAGE_ID);

  const png = await client.esims.qrPng(esim.iccid);
  assert.ok(png instanceof Uint8Array);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG");
  assert.equal(await decodeQr(png), esim.installation.qr_code);
  const small = await client.esims.qrPng(esim.iccid, { size: 128 });
  const view = new DataView(small.buffer, small.byteOffset, small.byteLength);
  assert.deepEqual([view.getUint32(16), view.getUint32(20)], [128, 128], "the IHDR's width and height");
  const seen = proxy.seen("GET", `/v1/esims/${esim.iccid}/qr.png`).at(-1)!;
  assert.equal(seen.headers.accept, "image/png");

  // Errors stay typed whatever the media type asked for.
  const other = await partnerClient(0);
  await assert.rejects(other.client.esims.qrPng(esim.iccid), (error: unknown) => {
    assert.ok(isApiError(error, "esim_not_found"), String(error));
    assert.equal(error.status, 404);
    return true;
  });
  await assert.rejects(client.esims.qrPng(esim.iccid, { size: 5 }), (error: unknown) =>
    isApiError(error, "invalid_request"),
  );
  await assert.rejects(client.esims.get("8901"), (error: unknown) => isApiError(error, "invalid_iccid"));
});

test("esims.simulate drives the sandbox carrier and is never retried: a lost answer is a ConnectionError after one attempt", async () => {
  const { client } = await partnerClient(10_00);
  const iccid = iccidOf(await buy(client));
  const used = await client.esims.simulate(iccid, { event: "use_data", data_mb: 100 });
  assert.equal(used.status, "active");
  assert.equal(used.usage.data_used_mb, 100);

  const simulatePath = `/v1/sandbox/esims/${iccid}/simulate`;
  proxy.inject("POST", simulatePath, { kind: "drop_response" });
  const before = proxy.seen("POST", simulatePath).length;
  await assert.rejects(client.esims.simulate(iccid, { event: "use_data", data_mb: 100 }), ConnectionError);
  assert.equal(
    proxy.seen("POST", simulatePath).length - before,
    1,
    "one attempt: a repeat would use the data twice",
  );
  assert.equal(
    (await client.esims.get(iccid)).usage.data_used_mb,
    200,
    "the dropped call did its work, once",
  );
});

test("wallet.transactions pages the statement as an iterator, wallet.transactionsCsv is the same rows as text", async () => {
  const { client, partner_id } = await partnerClient(50_00);
  for (let i = 1; i <= 3; i++) {
    await creditWallet(api, ADMIN_TOKEN, partner_id, 1_00 * i, `sdk-credit-${partner_id}-${i}`);
  }
  await buy(client);
  await buy(client);

  const before = proxy.seen("GET", "/v1/profile/wallet/transactions").length;
  const rows: WalletTransaction[] = [];
  for await (const row of client.wallet.transactions({ limit: 2 })) rows.push(row);
  assert.equal(rows.length, 6, "one seed credit, three credits, two purchases");
  assert.equal(proxy.seen("GET", "/v1/profile/wallet/transactions").length - before, 3, "three pages");
  assert.deepEqual(
    rows.map((r) => r.type),
    ["purchase", "purchase", "credit", "credit", "credit", "credit"],
  );
  // Consecutive rows chain: each balance_after is the next (older) one plus its own amount.
  for (let i = 0; i + 1 < rows.length; i++) {
    assert.equal(
      rows[i]!.balance_after.amount_minor,
      rows[i + 1]!.balance_after.amount_minor + rows[i]!.amount.amount_minor,
    );
  }
  const wallet = await client.wallet.get();
  assert.equal(rows[0]!.balance_after.amount_minor, wallet.balance.amount_minor);

  const csv = await client.wallet.transactionsCsv();
  assert.equal(typeof csv, "string");
  const lines = csv.trimEnd().split(/\r?\n/);
  assert.match(lines[0]!, /^transaction_id,/);
  assert.equal(lines.length, 1 + rows.length, "a header and every row");
  for (const row of rows) assert.ok(csv.includes(row.transaction_id), row.transaction_id);
  const seen = proxy.seen("GET", "/v1/profile/wallet/transactions").at(-1)!;
  assert.equal(seen.headers.accept, "text/csv");

  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const none = await client.wallet.transactionsCsv({ from: "2001-01-01", to: "2001-01-31" });
  assert.equal(none.trimEnd().split(/\r?\n/).length, 1, "only the header outside the range");
  assert.equal(
    (await client.wallet.transactions({ from: yesterday, to: today }).toArray()).length,
    rows.length,
  );
});

test("wallet.setLowBalanceAlert sets and clears the threshold and answers the wallet", async () => {
  const { client } = await partnerClient(10_00);
  const set = await client.wallet.setLowBalanceAlert({ threshold_minor: 5_00 });
  assert.deepEqual(set.low_balance_threshold, { amount_minor: 5_00, currency: set.balance.currency });
  assert.deepEqual((await client.wallet.get()).low_balance_threshold, set.low_balance_threshold);
  const seen = proxy.seen("PUT", "/v1/profile/wallet/low-balance-alert").at(-1)!;
  assert.deepEqual(JSON.parse(seen.body), { threshold_minor: 5_00 });

  // A PUT of the same value is harmless to repeat: a 503 is retried.
  proxy.inject("PUT", "/v1/profile/wallet/low-balance-alert", {
    kind: "respond",
    status: 503,
    headers: { "retry-after": "0" },
    body: { status: 503, code: "service_unavailable", detail: "busy", request_id: "req_1" },
  });
  const attempts = proxy.seen("PUT", "/v1/profile/wallet/low-balance-alert").length;
  const cleared = await client.wallet.setLowBalanceAlert({ threshold_minor: null });
  assert.equal(cleared.low_balance_threshold, null);
  assert.equal(
    proxy.seen("PUT", "/v1/profile/wallet/low-balance-alert").length - attempts,
    2,
    "the 503, then the PUT",
  );
  assert.equal((await client.wallet.get()).low_balance_threshold, null);
  await assert.rejects(client.wallet.setLowBalanceAlert({ threshold_minor: -1 }), (error: unknown) =>
    isApiError(error, "invalid_request"),
  );
});

// The partner's eSIMs after the sale (contract "eSIMs"): GET /v1/esims, /v1/esims/{iccid} and its
// QR image, over a real service process, the carrier simulator and a real SMTP server. eSIMs and
// top-ups are bought through the real purchase flow, whose completion writes their bundle rows.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { getEsim } from "../src/esims/get-esim.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import { parseMessage, partText } from "./support/smtp.ts";
import {
  call,
  createWorld,
  END_USER,
  type Json,
  newCart,
  newPartner,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld();
const [api] = world.services.map((s) => s.url) as [string];
const db = createKysely<Database>(world.database.pool);
const scratch = await mkdtemp(path.join(tmpdir(), "esims-test-"));
after(() => rm(scratch, { recursive: true, force: true }));

const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };

/** A partner with one bought FR 1 GB eSIM; the submit's answer as it came. */
async function partnerWithEsim(credit_minor = 100_00, client_reference?: string) {
  const partner = await newPartner(api, credit_minor);
  const order = await buy(partner.api_key, client_reference);
  return { ...partner, order, iccid: order.purchases[0].iccid as string };
}

async function buy(api_key: string, client_reference?: string): Promise<Json> {
  const cart = await newCart(api, api_key, "fr-1gb-7d");
  const answer = await submit(api, api_key, cart.cart_key, client_reference ? { client_reference } : {});
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

async function topUp(api_key: string, iccid: string, idempotency_key: string) {
  const body = { iccid, ...TOPUP, ...END_USER };
  return raw("POST", "/v1/orders/submit-topup", api_key, body, { "idempotency-key": idempotency_key });
}

/** The answer with its exact bytes: replays are compared byte for byte. */
async function raw(
  method: string,
  url: string,
  api_key: string,
  body?: Json,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; body: Json; headers: Headers; bytes: Buffer }> {
  const response = await fetch(`${api}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${api_key}`,
      ...(body ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString("utf8");
  const isJson = /json/.test(response.headers.get("content-type") ?? "");
  return {
    status: response.status,
    text,
    body: isJson ? JSON.parse(text) : {},
    headers: response.headers,
    bytes,
  };
}

function get(api_key: string, url: string) {
  return call(api, "GET", url, { key: api_key });
}

/** An ICCID nobody holds: well formed, valid Luhn digit, outside the simulator's range. */
function unknownIccid(): string {
  const payload = `8999${String(Date.now()).padStart(15, "0")}`.slice(0, 19);
  return `${payload}${luhnCheckDigit(payload)}`;
}

test("an eSIM with a top-up: its state, usage, bundles in order and the install kit; Order.esim_iccid everywhere", async () => {
  const partner = await partnerWithEsim(100_00, "trip-7");
  const { order, iccid } = partner;
  assert.equal(order.esim_iccid, iccid, "the submit answer names the eSIM");
  const topup = await topUp(partner.api_key, iccid, `esim-read-${iccid}`);
  assert.equal(topup.status, 200, topup.text);
  assert.equal(topup.body.esim_iccid, iccid, "a top-up names the eSIM it topped up");

  const esim = await get(partner.api_key, `/v1/esims/${iccid}`);
  assert.equal(esim.status, 200, JSON.stringify(esim.body));
  const purchase = order.purchases[0];
  const lpa = `LPA:1$${purchase.smdp_address}$${purchase.activation_code}`;
  const card = encodeURIComponent(lpa);
  const created = await sql<{
    created_at: Date;
  }>`select created_at from esims where iccid = ${iccid}`.execute(db);
  assert.deepEqual(esim.body, {
    iccid,
    order_id: order.orderID,
    client_reference: "trip-7",
    created_at: `${created.rows[0]!.created_at.toISOString().slice(0, 19)}Z`,
    status: "released",
    installed_at: null,
    activated_at: null,
    expires_at: null,
    usage: { data_total_mb: 1024 + 3072, data_used_mb: 0, data_remaining_mb: 1024 + 3072, updated_at: null },
    bundles: [
      {
        order_id: order.orderID,
        package_id: "fr-1gb-7d",
        name: esim.body.bundles[0].name,
        data_mb: 1024,
        data_used_mb: 0,
        validity_days: 7,
        status: "queued",
        activated_at: null,
        expires_at: null,
      },
      {
        order_id: topup.body.orderID,
        package_id: "fr-3gb-15d",
        name: esim.body.bundles[1].name,
        data_mb: 3072,
        data_used_mb: 0,
        validity_days: 15,
        status: "queued",
        activated_at: null,
        expires_at: null,
      },
    ],
    installation: {
      qr_code: lpa,
      activation_code: purchase.activation_code,
      smdp_address: purchase.smdp_address,
      ios_install_url: `https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=${card}`,
      android_install_url: `https://esimsetup.android.com/esim_qrcode_provisioning?carddata=${card}`,
      qr_png_url: `/v1/esims/${iccid}/qr.png`,
    },
  });
  const got: Json = esim.body;
  assert.match(got.bundles[0].name, /France/);
  assert.equal(card.includes("$"), false, "the LPA string is URL-encoded in the links");
  // The order answers carry the same install links as the Esim.
  for (const key of ["ios_install_url", "android_install_url", "qr_code"]) {
    assert.equal(purchase[key], got.installation[key], key);
  }

  // Inside a transaction (the carrier-signal side renders the eSIM it changed) the same Esim comes back.
  const inTransaction = await db.transaction().execute((trx) => getEsim(trx, partner.partner_id, iccid));
  assert.deepEqual(inTransaction, esim.body);

  const fetched = await get(partner.api_key, `/v1/orders/${order.orderID}`);
  assert.deepEqual(fetched.body, order);
  const fetchedTopup = await get(partner.api_key, `/v1/orders/${topup.body.orderID}`);
  assert.equal(fetchedTopup.body.esim_iccid, iccid);
  const listed = await get(partner.api_key, "/v1/profile/orders");
  assert.deepEqual(
    listed.body.data.map((o: Json) => [o.orderID, o.esim_iccid]),
    [
      [topup.body.orderID, iccid],
      [order.orderID, iccid],
    ],
  );
});

test("usage: sums the bundles, counts what queued and active bundles have left, and is null-total when a bundle is unlimited", async () => {
  const partner = await partnerWithEsim();
  const { iccid } = partner;
  const topup = await topUp(partner.api_key, iccid, `usage-${iccid}`);
  assert.equal(topup.status, 200, topup.text);
  // The top-up makes the eSIM due for a pull at once: let that pull land first, or the carrier's
  // fresher snapshot would overwrite the state this test writes below.
  await waitFor(
    "the pull the top-up asked for",
    async () =>
      (
        await sql<{
          pulled: boolean;
        }>`select next_sync_at > now() as pulled from esims where iccid = ${iccid}`.execute(db)
      ).rows[0]?.pulled === true || null,
    10_000,
  );
  // State as the carrier signals would leave it: the original used up, the top-up half used. Its
  // usage time lies ahead of any snapshot the carrier can send, so a pull still in flight (claimed
  // before the wait above saw it) merges in without moving it: the merge keeps the latest time.
  await sql`update esim_bundles set status = 'depleted', data_used_mb = 1024, activated_at = '2026-11-01T08:00:00Z',
            expires_at = '2026-11-08T08:00:00Z' where order_id = ${partner.order.orderID}`.execute(db);
  await sql`update esim_bundles set status = 'active', data_used_mb = 1000 where order_id = ${topup.body.orderID}`.execute(
    db,
  );
  await sql`update esims set status = 'active', installed_at = '2026-11-01T07:59:00.600Z', next_sync_at = null,
            activated_at = '2026-11-01T08:00:00Z', usage_updated_at = '2099-11-05T12:30:00Z' where iccid = ${iccid}`.execute(
    db,
  );

  const esim = (await get(partner.api_key, `/v1/esims/${iccid}`)).body;
  assert.equal(esim.status, "active");
  assert.equal(esim.installed_at, "2026-11-01T07:59:00Z");
  assert.equal(esim.activated_at, "2026-11-01T08:00:00Z");
  assert.deepEqual(esim.usage, {
    data_total_mb: 4096,
    data_used_mb: 2024,
    data_remaining_mb: 2072,
    updated_at: "2099-11-05T12:30:00Z",
  });
  assert.deepEqual(
    esim.bundles.map((b: Json) => [b.status, b.data_used_mb, b.activated_at, b.expires_at]),
    [
      ["depleted", 1024, "2026-11-01T08:00:00Z", "2026-11-08T08:00:00Z"],
      ["active", 1000, null, null],
    ],
  );

  // A write outside the service notifies like the service's own writes, or cached reads stay stale.
  await sql`update esim_bundles set data_mb = null where order_id = ${topup.body.orderID}`.execute(db);
  await sql`select pg_notify('esim_changed', ${iccid})`.execute(db);
  const unlimited = await waitFor(
    "the service drops its cached eSIM",
    async () => {
      const body = (await get(partner.api_key, `/v1/esims/${iccid}`)).body;
      return body.usage.data_total_mb === null ? body : null;
    },
    2_000,
  );
  assert.deepEqual(unlimited.usage, {
    data_total_mb: null,
    data_used_mb: 2024,
    data_remaining_mb: null,
    updated_at: "2099-11-05T12:30:00Z",
  });
  assert.equal(unlimited.bundles[1].data_mb, null);
});

test("GET /v1/esims: newest first over more than two pages, filtered by client_reference and status, stable as eSIMs are sold", async () => {
  const partner = await newPartner(api, 200_00);
  const bought: Json[] = [];
  for (let i = 0; i < 7; i++) bought.push(await buy(partner.api_key, i % 2 === 0 ? "even" : `odd-${i}`));
  const iccids = bought.map((order) => order.purchases[0].iccid as string);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await get(partner.api_key, `/v1/esims?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.ok(page.body.data.length <= 2);
    seen.push(...page.body.data.map((esim: Json) => esim.iccid));
    cursor = page.body.next_cursor;
    assert.equal(page.body.has_more, cursor !== null);
    if (pages === 1) await buy(partner.api_key, "even"); // sold between pages: not on a later page
    pages++;
  } while (cursor);
  assert.equal(pages, 4);
  assert.deepEqual(seen, [...iccids].reverse(), "every eSIM once, newest first");

  const even = await get(partner.api_key, "/v1/esims?client_reference=even&limit=100");
  assert.equal(even.body.data.length, 5);
  for (const esim of even.body.data) assert.equal(esim.client_reference, "even");
  assert.deepEqual(
    even.body.data.slice(1).map((esim: Json) => esim.iccid),
    iccids.filter((_, i) => i % 2 === 0).reverse(),
  );

  await sql`update esims set status = 'installed', installed_at = now() where iccid = ${iccids[3]!}`.execute(
    db,
  );
  const installed = await get(partner.api_key, "/v1/esims?status=installed");
  assert.deepEqual(
    installed.body.data.map((esim: Json) => [esim.iccid, esim.status]),
    [[iccids[3], "installed"]],
  );
  const none = await get(partner.api_key, "/v1/esims?status=installed&client_reference=even");
  assert.deepEqual(none.body, { data: [], has_more: false, next_cursor: null });
  assert.equal((await get(partner.api_key, "/v1/esims")).body.data.length, 8, "default limit 20");
});

test("GET /v1/esims refuses a bad limit, status or cursor with 400 invalid_request", async () => {
  const partner = await newPartner(api, 0);
  for (const query of [
    "?limit=0",
    "?limit=101",
    "?limit=x",
    "?status=sold",
    "?cursor=bm90LWEtY3Vyc29y",
    "?foo=1",
  ]) {
    const answer = await get(partner.api_key, `/v1/esims${query}`);
    assert.equal(answer.status, 400, query);
    assert.equal(answer.body.code, "invalid_request", query);
  }
  assert.deepEqual((await get(partner.api_key, "/v1/esims")).body, {
    data: [],
    has_more: false,
    next_cursor: null,
  });
});

test("every eSIM route: a malformed ICCID is 400 invalid_iccid, an unknown or another partner's 404 esim_not_found", async () => {
  const owner = await partnerWithEsim();
  const intruder = await newPartner(api, 0, "Intruder");
  const malformed = [
    "123",
    "8901260000000000000", // Luhn digit wrong
    `${owner.iccid.slice(0, -1)}${(Number(owner.iccid.at(-1)) + 1) % 10}`,
    "89abcdefghijklmnopq",
    "9".repeat(150),
  ];
  for (const suffix of ["", "/qr.png"]) {
    for (const iccid of malformed) {
      const answer = await get(owner.api_key, `/v1/esims/${iccid}${suffix}`);
      assert.equal(answer.status, 400, `${iccid}${suffix}`);
      assert.equal(answer.body.code, "invalid_iccid", `${iccid}${suffix}`);
    }
    const unknown = await get(owner.api_key, `/v1/esims/${unknownIccid()}${suffix}`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, "esim_not_found");
    const foreign = await get(intruder.api_key, `/v1/esims/${owner.iccid}${suffix}`);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.code, "esim_not_found");
    assert.equal(
      foreign.body.detail.replace(owner.iccid, "X"),
      unknown.body.detail.replace(/\d{19,20}/, "X"),
    );
  }
  const list = await get(intruder.api_key, "/v1/esims");
  assert.deepEqual(list.body.data, [], "another partner's eSIMs are not listed");
});

/** Width and height from the PNG's IHDR chunk. */
function pngSize(png: Buffer): [number, number] {
  assert.equal(png.subarray(1, 4).toString("latin1"), "PNG");
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

async function decodeQr(png: Buffer): Promise<string> {
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.png`);
  await writeFile(file, png);
  // zbar-tools is a test requirement (.ci/run installs it): a missing zbarimg fails here.
  const { stdout } = await promisify(execFile)("zbarimg", ["--quiet", "--raw", file]);
  return stdout.replace(/\n$/, "");
}

test("qr.png is the QR code of installation.qr_code, at the size asked for, the same bytes every time", async () => {
  const partner = await partnerWithEsim();
  const esim = (await get(partner.api_key, `/v1/esims/${partner.iccid}`)).body;
  const first = await raw("GET", esim.installation.qr_png_url, partner.api_key);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("content-type"), "image/png");
  assert.match(first.headers.get("cache-control") ?? "", /^private/);
  assert.deepEqual(pngSize(first.bytes), [512, 512]);
  assert.equal(await decodeQr(first.bytes), esim.installation.qr_code);
  const again = await raw("GET", esim.installation.qr_png_url, partner.api_key);
  assert.deepEqual(again.bytes, first.bytes);

  for (const size of [128, 1024]) {
    const png = await raw("GET", `${esim.installation.qr_png_url}?size=${size}`, partner.api_key);
    assert.equal(png.status, 200);
    assert.deepEqual(pngSize(png.bytes), [size, size]);
    assert.equal(await decodeQr(png.bytes), esim.installation.qr_code);
  }
  for (const size of ["127", "1025", "abc", "512.5", ""]) {
    const refused = await raw("GET", `${esim.installation.qr_png_url}?size=${size}`, partner.api_key);
    assert.equal(refused.status, 400, size);
    assert.equal(refused.body.code, "invalid_request", size);
  }
});

test("the confirmation email carries the same install links as the API", async () => {
  const partner = await partnerWithEsim();
  const esim = (await get(partner.api_key, `/v1/esims/${partner.iccid}`)).body;
  const email = await waitFor("the confirmation email", async () =>
    world.smtp.messages.find((m) => m.raw.includes(partner.iccid)),
  );
  const message = parseMessage(email.raw);
  const text = partText(message, "text/plain");
  const html = partText(message, "text/html");
  for (const url of [esim.installation.ios_install_url, esim.installation.android_install_url]) {
    assert.ok(text.includes(url), `text body has ${url}`);
    assert.ok(html.includes(`href="${url}"`), `html body links ${url}`);
  }
});

test("a retried submit and a replayed top-up answer byte-identical bodies, esim_iccid included", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const body = { cart_key: cart.cart_key, ...END_USER };
  const first = await raw("POST", "/v1/orders/submit", partner.api_key, body);
  assert.equal(first.status, 200, first.text);
  const iccid = first.body.purchases[0].iccid;
  assert.equal(first.body.esim_iccid, iccid);
  const retry = await raw("POST", "/v1/orders/submit", partner.api_key, body);
  assert.equal(retry.text, first.text);

  const topup = await topUp(partner.api_key, iccid, `replay-${iccid}`);
  assert.equal(topup.status, 200, topup.text);
  assert.equal(topup.body.esim_iccid, iccid);
  const replay = await topUp(partner.api_key, iccid, `replay-${iccid}`);
  assert.equal(replay.text, topup.text);
});

test("callbacks disabled: a callback with a malformed body is 404 like an unknown route, not 400", async () => {
  const response = await call(api, "POST", "/carrier/callbacks", {
    body: { hello: 1 } as unknown as Json,
    headers: { authorization: "Bearer anything" },
  });
  assert.equal(response.status, 404, JSON.stringify(response.body));
});

test("a top-up revives a depleted eSIM within a sync tick of its 200, callbacks off: the completion makes it due for a pull", async () => {
  const partner = await partnerWithEsim();
  const { iccid } = partner;
  // The carrier (no callbacks in this world) uses the bundle up; one pull tells us.
  await world.simulator.simulate(iccid, { event: "use_data", data_mb: 1024 });
  await sql`update esims set next_sync_at = now() where iccid = ${iccid}`.execute(db);
  await waitFor("the pull of the depleted eSIM", async () => {
    return (await get(partner.api_key, `/v1/esims/${iccid}`)).body.status === "depleted";
  });
  const due = await sql<{ in_s: number }>`
    select extract(epoch from next_sync_at - now())::float8 as in_s from esims where iccid = ${iccid}`.execute(
    db,
  );
  assert.ok(due.rows[0]!.in_s > 60, "the next regular pull is far off (USAGE_SYNC_MIN_INTERVAL_S)");

  const topup = await topUp(partner.api_key, iccid, `revive-${iccid}`);
  assert.equal(topup.status, 200, topup.text);
  const revived = await waitFor(
    "the eSIM usable again",
    async () => {
      const body = (await get(partner.api_key, `/v1/esims/${iccid}`)).body;
      return body.status === "active" ? body : null;
    },
    5_000,
  );
  assert.deepEqual(
    revived.bundles.map((b: Json) => [b.order_id, b.status]),
    [
      [partner.order.orderID, "depleted"],
      [topup.body.orderID, "active"],
    ],
    "the carrier started the new bundle at once: the one before it had ended",
  );
  assert.equal(revived.usage.data_remaining_mb, 3072);
});

// PUT/GET /v1/profile/branding and /v1/profile/notifications (issue 35 items 3 and 4) over real
// HTTP and PostgreSQL: what is stored and answered, every refusal (which changes nothing), the
// audit entries, and a read-only key refused. Also the logo check and the accent colour rule alone.
import assert from "node:assert/strict";
import { test } from "node:test";
import { contrastRatio, readableAccent } from "../src/partners/accent-color.ts";
import { checkLogoPng } from "../src/partners/png-logo.ts";
import { createTestApp } from "./support/app.ts";
import { request } from "./support/http.ts";
import { makePng, pngChunk, withBadCrc } from "./support/png.ts";

const app = await createTestApp();
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });

const call = (key: string, method: string, path: string, body?: unknown) =>
  request(base, method, path, { key, ...(body === undefined ? {} : { body }) });

const LOGO = makePng(64, 32);

test("branding: a partner that set nothing gets the service's defaults", async () => {
  const partner = await app.createPartner();
  const got = await call(partner.api_key, "GET", "/v1/profile/branding");
  assert.equal(got.status, 200);
  assert.deepEqual(got.body, {
    display_name: null,
    accent_color: "#1f5fbf",
    accent_color_applied: "#1f5fbf",
    support_email: null,
    support_url: null,
    logo_png_base64: null,
    email_from_name: null,
    reply_to: null,
  });
});

test("branding: PUT stores every field, GET answers them, a pale accent is served darkened", async () => {
  const partner = await app.createPartner();
  const body = {
    display_name: "Wanderlust Trips",
    accent_color: "#FFD700",
    support_email: "help@wanderlust.example",
    support_url: "https://wanderlust.example/help",
    logo_png_base64: LOGO.toString("base64"),
    email_from_name: "Wanderlust eSIM",
    reply_to: "care@wanderlust.example",
  };
  const put = await call(partner.api_key, "PUT", "/v1/profile/branding", body);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const got = await call(partner.api_key, "GET", "/v1/profile/branding");
  assert.deepEqual(got.body, put.body);
  assert.equal(got.body.accent_color, "#ffd700", "stored as chosen, lower case");
  assert.notEqual(got.body.accent_color_applied, "#ffd700");
  assert.ok(contrastRatio(got.body.accent_color_applied, "#ffffff") >= 4.5);
  assert.equal(got.body.logo_png_base64, LOGO.toString("base64"));
  assert.equal(got.body.display_name, "Wanderlust Trips");

  // Fields left out keep their value; null clears one.
  const again = await call(partner.api_key, "PUT", "/v1/profile/branding", { support_url: null });
  assert.equal(again.status, 200);
  assert.equal(again.body.support_url, null);
  assert.equal(again.body.display_name, "Wanderlust Trips");
  assert.equal(again.body.logo_png_base64, LOGO.toString("base64"));

  const audit = await app.database.pool.query(
    "select action, details from audit_log where partner_id = $1 and action = 'branding.updated' order by audit_seq",
    [partner.partner_id],
  );
  assert.deepEqual(
    audit.rows.map((row) => row.action),
    ["branding.updated", "branding.updated"],
  );
  assert.deepEqual(audit.rows[0].details.logo_png, { bytes: LOGO.length });
  assert.deepEqual(audit.rows[1].details, { support_url: null });

  // The same values again change nothing and log nothing.
  await call(partner.api_key, "PUT", "/v1/profile/branding", { support_url: null });
  const count = await app.database.pool.query(
    "select count(*)::int as n from audit_log where partner_id = $1 and action = 'branding.updated'",
    [partner.partner_id],
  );
  assert.equal(count.rows[0].n, 2);
});

const REFUSALS: Array<[string, Record<string, unknown>, string]> = [
  ["a colour not #RRGGBB", { accent_color: "red" }, "accent_color"],
  ["a three-digit colour", { accent_color: "#fff" }, "accent_color"],
  [
    "a logo that is not a PNG",
    { logo_png_base64: Buffer.from("GIF89a not a png").toString("base64") },
    "logo_png_base64",
  ],
  [
    "a logo over 40 KiB",
    { logo_png_base64: makePng(110, 100, { noise: true }).toString("base64") },
    "logo_png_base64",
  ],
  [
    "a logo with a bad chunk CRC",
    { logo_png_base64: withBadCrc(LOGO).toString("base64") },
    "logo_png_base64",
  ],
  ["a logo wider than 1024 px", { logo_png_base64: makePng(1100, 1).toString("base64") }, "logo_png_base64"],
  [
    "a logo whose image data is not what IHDR says",
    { logo_png_base64: makePng(8, 8, { header_height: 9 }).toString("base64") },
    "logo_png_base64",
  ],
  ["a logo that is not base64", { logo_png_base64: "not base64!" }, "logo_png_base64"],
  ["an http support URL", { support_url: "http://wanderlust.example/help" }, "support_url"],
  ["a support URL that is not a URL", { support_url: "wanderlust.example" }, "support_url"],
  ["a Reply-To that is not an address", { reply_to: "care at wanderlust" }, "reply_to"],
  [
    "a support email with a line break",
    { support_email: "a@b.example\r\nBcc: x@y.example" },
    "support_email",
  ],
  ["a From name with a line break", { email_from_name: "Wanderlust\r\nBcc: x@y.example" }, "email_from_name"],
  ["an empty display name", { display_name: "  " }, "display_name"],
];

for (const [what, body, field] of REFUSALS) {
  test(`branding: ${what} is 400 invalid_request naming ${field}, and nothing changes`, async () => {
    const partner = await app.createPartner();
    const before = await call(partner.api_key, "PUT", "/v1/profile/branding", { display_name: "Before" });
    assert.equal(before.status, 200);
    const put = await call(partner.api_key, "PUT", "/v1/profile/branding", {
      display_name: "After",
      ...body,
    });
    assert.equal(put.status, 400, JSON.stringify(put.body));
    assert.equal(put.body.code, "invalid_request");
    assert.ok(JSON.stringify(put.body).includes(field), JSON.stringify(put.body));
    const got = await call(partner.api_key, "GET", "/v1/profile/branding");
    assert.deepEqual(got.body, before.body);
  });
}

test("branding: an oversized logo's refusal says its size and the limit", async () => {
  const partner = await app.createPartner();
  const big = makePng(110, 100, { noise: true });
  assert.ok(big.length > 40 * 1024);
  const put = await call(partner.api_key, "PUT", "/v1/profile/branding", {
    logo_png_base64: big.toString("base64"),
  });
  assert.equal(put.status, 400);
  assert.match(put.body.detail, /40960 \(40 KiB\)/);
});

test("branding and notifications: a read-only key reads them and may not change them", async () => {
  const partner = await app.createPartner();
  const issued = await request(base, "POST", `/admin/partners/${partner.partner_id}/api-keys`, {
    headers: { authorization: `Bearer ${app.ctx.config.admin_token}` },
    body: { scope: "read_only" },
  });
  assert.equal(issued.status, 201, JSON.stringify(issued.body));
  const read_only = issued.body.api_key as string;
  assert.equal((await call(read_only, "GET", "/v1/profile/branding")).status, 200);
  assert.equal((await call(read_only, "GET", "/v1/profile/notifications")).status, 200);
  const put = await call(read_only, "PUT", "/v1/profile/branding", { display_name: "Nope" });
  assert.equal(put.status, 403);
  assert.equal(put.body.code, "insufficient_scope");
  const notifications = await call(read_only, "PUT", "/v1/profile/notifications", {
    confirmation_email: false,
  });
  assert.equal(notifications.body.code, "insufficient_scope");
  assert.equal(
    (await call(partner.api_key, "GET", "/v1/profile/notifications")).body.confirmation_email,
    true,
  );
});

test("notifications: defaults, fields left out keep their value, an http top-up URL is refused", async () => {
  const partner = await app.createPartner();
  const defaults = await call(partner.api_key, "GET", "/v1/profile/notifications");
  assert.deepEqual(defaults.body, {
    confirmation_email: true,
    traveller_usage_emails: false,
    top_up_url: null,
  });
  const put = await call(partner.api_key, "PUT", "/v1/profile/notifications", {
    traveller_usage_emails: true,
    top_up_url: "https://wanderlust.example/top-up?iccid={iccid}",
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual(put.body, {
    confirmation_email: true,
    traveller_usage_emails: true,
    top_up_url: "https://wanderlust.example/top-up?iccid={iccid}",
  });
  const off = await call(partner.api_key, "PUT", "/v1/profile/notifications", { confirmation_email: false });
  assert.deepEqual(off.body, { ...put.body, confirmation_email: false });
  const refused = await call(partner.api_key, "PUT", "/v1/profile/notifications", {
    traveller_usage_emails: false,
    top_up_url: "http://wanderlust.example/top-up",
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.code, "invalid_request");
  assert.deepEqual((await call(partner.api_key, "GET", "/v1/profile/notifications")).body, off.body);
  const wrong_type = await call(partner.api_key, "PUT", "/v1/profile/notifications", {
    confirmation_email: "no",
  });
  assert.equal(wrong_type.status, 400);
  const audit = await app.database.pool.query(
    "select details from audit_log where partner_id = $1 and action = 'notifications.updated' order by audit_seq",
    [partner.partner_id],
  );
  assert.deepEqual(
    audit.rows.map((row) => row.details),
    [
      { traveller_usage_emails: true, top_up_url: "https://wanderlust.example/top-up?iccid={iccid}" },
      { confirmation_email: false },
    ],
  );
});

test("logo check: each damaged or unusual file is refused with its reason", () => {
  assert.deepEqual(checkLogoPng(LOGO), { ok: true, width: 64, height: 32 });
  const reasons = [
    checkLogoPng(Buffer.from("not a png at all")),
    checkLogoPng(withBadCrc(LOGO)),
    checkLogoPng(LOGO.subarray(0, LOGO.length - 12)),
    checkLogoPng(makePng(8, 8, { idat: Buffer.from("not zlib") })),
    checkLogoPng(Buffer.concat([LOGO, pngChunk("tEXt", Buffer.from("after IEND"))])),
  ].map((check) => (check.ok ? "ok" : check.reason));
  assert.deepEqual(reasons, [
    "is not a PNG (no PNG signature)",
    "chunk IDAT has a bad CRC",
    "ends inside a chunk (no IEND)",
    "has image data that does not decompress to the size its header says",
    "has bytes after IEND",
  ]);
});

test("accent colour: readable colours are kept, pale ones darkened to 4.5:1 with their hue", () => {
  assert.equal(readableAccent("#1F5FBF"), "#1f5fbf");
  assert.equal(readableAccent("#000000"), "#000000");
  for (const pale of ["#ffffff", "#ffd700", "#87ceeb", "#ff6600", "#00ff00"]) {
    const adjusted = readableAccent(pale);
    assert.ok(contrastRatio(adjusted, "#ffffff") >= 4.5, `${pale} -> ${adjusted}`);
    // The least change: one step lighter would not be readable.
    const lighter = `#${[1, 3, 5]
      .map((at) =>
        Math.min(255, Number.parseInt(adjusted.slice(at, at + 2), 16) + 3)
          .toString(16)
          .padStart(2, "0"),
      )
      .join("")}`;
    assert.ok(
      contrastRatio(lighter, "#ffffff") < 4.6,
      `${pale} -> ${adjusted} is not much darker than needed`,
    );
  }
});

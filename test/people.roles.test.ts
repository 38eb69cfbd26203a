// The console's role matrix (issue 31) over real HTTP and PostgreSQL: for each partner role and each
// operator role, every page GET and every form POST either opens (any answer but 401/403: a made-up
// id answers 404 past the check, an empty form 400) or is refused with the 403 refusal page and
// changes nothing. The expected cells are written out here, not derived from roles.ts, so a change
// of the rule table shows up as a failing cell. Every route of console/permissions.ts has a row.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { assertRouteHasPermission, permissionRows } from "../src/console/permissions.ts";
import { OPERATOR_ROLES, PARTNER_ROLES } from "../src/people/roles.ts";
import { createTestApp } from "./support/app.ts";
import { addPerson, signInCookie } from "./support/people.ts";

const t = await createTestApp();
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
const partner = await t.createPartner("Matrix Travel");

const ORDER = "ord_AAAAAAAAAAAAAAAAAAAAAA";
const ICCID = "8988247000000000009";
const KEY = "key_AAAAAAAAAAAAAAAAAAAAAA";
const ENDPOINT = "we_AAAAAAAAAAAAAAAAAAAAAA";
const DELIVERY = "wd_AAAAAAAAAAAAAAAAAAAAAA";
const USER = "usr_AAAAAAAAAAAAAAAAAAAAAA";
const UNKNOWN_PARTNER = "ptr_AAAAAAAAAAAAAAAAAAAAAA";

// Y: the role opens it; N: 403. Columns in PARTNER_ROLES order: owner admin developer support finance viewer.
const PARTNER_MATRIX: Array<[method: string, route: string, path: string, cells: string]> = [
  ["GET", "/console", "/console", "YYYYYY"],
  ["GET", "/console/orders", "/console/orders", "YYYYYY"],
  ["GET", "/console/orders/:order_id", `/console/orders/${ORDER}`, "YYYYYY"],
  ["POST", "/console/orders/:order_id/resend-email", `/console/orders/${ORDER}/resend-email`, "YYNYNN"],
  ["POST", "/console/orders/:order_id/refund", `/console/orders/${ORDER}/refund`, "YYNYNN"],
  ["GET", "/console/esims", "/console/esims", "YYYYYY"],
  ["GET", "/console/esims/:iccid", `/console/esims/${ICCID}`, "YYYYYY"],
  ["GET", "/console/esims/:iccid/qr.png", `/console/esims/${ICCID}/qr.png`, "YYYYYY"],
  ["POST", "/console/esims/:iccid/simulate", `/console/esims/${ICCID}/simulate`, "YYNYNN"],
  ["POST", "/console/esims/:iccid/top-up", `/console/esims/${ICCID}/top-up`, "YYNYNN"],
  ["GET", "/console/wallet", "/console/wallet", "YYYYYY"],
  ["GET", "/console/wallet/statement.csv", "/console/wallet/statement.csv", "YYYNYY"],
  ["GET", "/console/wallet/monthly", "/console/wallet/monthly", "YYYNYY"],
  ["GET", "/console/wallet/statement.pdf", "/console/wallet/statement.pdf", "YYYNYY"],
  ["GET", "/console/keys", "/console/keys", "YYYNNY"],
  ["POST", "/console/keys", "/console/keys", "YYYNNN"],
  ["POST", "/console/keys/:key_id/revoke", `/console/keys/${KEY}/revoke`, "YYYNNN"],
  ["GET", "/console/webhooks", "/console/webhooks", "YYYNNY"],
  ["POST", "/console/webhooks", "/console/webhooks", "YYYNNN"],
  ["GET", "/console/webhooks/:endpoint_id", `/console/webhooks/${ENDPOINT}`, "YYYNNY"],
  ["POST", "/console/webhooks/:endpoint_id/test", `/console/webhooks/${ENDPOINT}/test`, "YYYNNN"],
  [
    "POST",
    "/console/webhooks/:endpoint_id/rotate-secret",
    `/console/webhooks/${ENDPOINT}/rotate-secret`,
    "YYYNNN",
  ],
  ["POST", "/console/webhooks/:endpoint_id/status", `/console/webhooks/${ENDPOINT}/status`, "YYYNNN"],
  ["POST", "/console/webhooks/:endpoint_id/delete", `/console/webhooks/${ENDPOINT}/delete`, "YYYNNN"],
  [
    "POST",
    "/console/webhooks/:endpoint_id/deliveries/:delivery_id/retry",
    `/console/webhooks/${ENDPOINT}/deliveries/${DELIVERY}/retry`,
    "YYYNNN",
  ],
  ["GET", "/console/team", "/console/team", "YYYYYY"],
  ["POST", "/console/team/invitations", "/console/team/invitations", "YYNNNN"],
  ["POST", "/console/team/:user_id/role", `/console/team/${USER}/role`, "YYNNNN"],
  ["POST", "/console/team/:user_id/status", `/console/team/${USER}/status`, "YYNNNN"],
  ["POST", "/console/team/two-factor", "/console/team/two-factor", "YNNNNN"],
  ["GET", "/console/team/sso", "/console/team/sso", "YNNNNN"],
  ["POST", "/console/team/sso", "/console/team/sso", "YNNNNN"],
  ["POST", "/console/team/sso/remove", "/console/team/sso/remove", "YNNNNN"],
  ["GET", "/console/audit-log", "/console/audit-log", "YYYNNY"],
];

// Columns in OPERATOR_ROLES order: admin finance support viewer.
const OPERATOR_MATRIX: Array<[method: string, route: string, path: string, cells: string]> = [
  ["GET", "/console/admin", "/console/admin", "YYYY"],
  ["POST", "/console/admin/partners", "/console/admin/partners", "YNNN"],
  ["GET", "/console/admin/partners/:partner_id", `/console/admin/partners/${UNKNOWN_PARTNER}`, "YYYY"],
  [
    "POST",
    "/console/admin/partners/:partner_id/keys",
    `/console/admin/partners/${UNKNOWN_PARTNER}/keys`,
    "YNNN",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/keys/:key_id/revoke",
    `/console/admin/partners/${UNKNOWN_PARTNER}/keys/${KEY}/revoke`,
    "YNNN",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/credits",
    `/console/admin/partners/${UNKNOWN_PARTNER}/credits`,
    "YYNN",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/pricing",
    `/console/admin/partners/${UNKNOWN_PARTNER}/pricing`,
    "YYNN",
  ],
  [
    "GET",
    "/console/admin/partners/:partner_id/money",
    `/console/admin/partners/${UNKNOWN_PARTNER}/money`,
    "YYNY",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/adjustments",
    `/console/admin/partners/${UNKNOWN_PARTNER}/adjustments`,
    "YYNN",
  ],
  [
    "GET",
    "/console/admin/partners/:partner_id/statement.pdf",
    `/console/admin/partners/${UNKNOWN_PARTNER}/statement.pdf`,
    "YYNY",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/users",
    `/console/admin/partners/${UNKNOWN_PARTNER}/users`,
    "YNNN",
  ],
  [
    "GET",
    "/console/admin/partners/:partner_id/orders",
    `/console/admin/partners/${UNKNOWN_PARTNER}/orders`,
    "YYYY",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/name",
    `/console/admin/partners/${UNKNOWN_PARTNER}/name`,
    "YNNN",
  ],
  [
    "POST",
    "/console/admin/partners/:partner_id/status",
    `/console/admin/partners/${UNKNOWN_PARTNER}/status`,
    "YNNN",
  ],
  ["GET", "/console/admin/orders", "/console/admin/orders", "YYYY"],
  ["GET", "/console/admin/orders/:order_id", `/console/admin/orders/${ORDER}`, "YYYY"],
  ["POST", "/console/admin/orders/:order_id/settle", `/console/admin/orders/${ORDER}/settle`, "YNYN"],
  ["POST", "/console/admin/orders/:order_id/refund", `/console/admin/orders/${ORDER}/refund`, "YNYN"],
  ["GET", "/console/admin/catalog", "/console/admin/catalog", "YNNN"],
  ["POST", "/console/admin/catalog", "/console/admin/catalog", "YNNN"],
  ["POST", "/console/admin/catalog/sync", "/console/admin/catalog/sync", "YNNN"],
  ["GET", "/console/admin/ledger", "/console/admin/ledger", "YYNY"],
  ["GET", "/console/admin/people", "/console/admin/people", "YYYY"],
  ["POST", "/console/admin/people/invitations", "/console/admin/people/invitations", "YNNN"],
  ["POST", "/console/admin/people/:user_id/role", `/console/admin/people/${USER}/role`, "YNNN"],
  ["POST", "/console/admin/people/:user_id/status", `/console/admin/people/${USER}/status`, "YNNN"],
  ["GET", "/console/admin/audit-log", "/console/admin/audit-log", "YYYY"],
];

const WATCHED_TABLES = [
  "users",
  "user_tokens",
  "audit_log",
  "api_keys",
  "webhook_endpoints",
  "partners",
  "partner_pricing",
  "ledger_transfers",
  "orders",
  "packages",
];

async function snapshot(): Promise<string> {
  const parts = WATCHED_TABLES.map(
    (table) =>
      `select '${table}' as name, count(*)::text || ':' || coalesce(sum(hashtext(t::text)::bigint), 0)::text as digest from ${table} t`,
  );
  const { rows } = await sql<{ name: string; digest: string }>`${sql.raw(parts.join(" union all "))}`.execute(
    t.db,
  );
  return JSON.stringify(rows);
}

type Signed = { cookie: string; csrf: string };

async function signedIn(realm: "partner" | "operator", role: string): Promise<Signed> {
  const person = await addPerson(t.database.pool, {
    realm,
    role,
    partner_id: realm === "partner" ? partner.partner_id : null,
  });
  const name = realm === "partner" ? "console_partner" : "console_operator";
  const cookie = `${name}=${await signInCookie(base, person)}`;
  // Every role opens the area's people page: the CSRF token of its forms is there.
  const page = await (
    await fetch(`${base}${realm === "partner" ? "/console/team" : "/console/admin/people"}`, {
      headers: { cookie },
    })
  ).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf, `a CSRF token for ${realm} ${role}`);
  return { cookie, csrf };
}

async function walk(
  realm: "partner" | "operator",
  roles: readonly string[],
  matrix: Array<[string, string, string, string]>,
): Promise<void> {
  for (const [r, role] of roles.entries()) {
    const s = await signedIn(realm, role);
    for (const [method, , path, cells] of matrix) {
      const cell = `${realm} ${role} × ${method} ${path}`;
      const before = await snapshot();
      const answer = await fetch(`${base}${path}`, {
        method,
        redirect: "manual",
        headers: {
          cookie: s.cookie,
          origin: base,
          ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        },
        ...(method === "POST" ? { body: new URLSearchParams({ _csrf: s.csrf }).toString() } : {}),
      });
      const body = await answer.text();
      if (cells[r] === "N") {
        assert.equal(answer.status, 403, `${cell}: refused`);
        assert.match(body, /Your role does not allow this/, `${cell}: the refusal page`);
        assert.equal(await snapshot(), before, `${cell}: nothing changed`);
      } else {
        assert.ok(
          ![401, 403].includes(answer.status) && answer.status < 500,
          `${cell}: opens (got ${answer.status})`,
        );
      }
    }
  }
}

test("every console route of the permission table has a row in this matrix, and a route without a permission cannot be registered", () => {
  for (const [realm, matrix] of [
    ["partner", PARTNER_MATRIX],
    ["operator", OPERATOR_MATRIX],
  ] as const) {
    const tested = new Set(matrix.map(([method, route]) => `${method} ${route}`));
    const rows = permissionRows(realm)
      .filter((row) => !row.url.endsWith("/sign-out") && !(row.url.endsWith("/") && row.url.length > 1))
      .map((row) => `${row.method} ${row.url}`);
    assert.deepEqual(
      rows.filter((row) => !tested.has(row)),
      [],
      `${realm} routes without a matrix row`,
    );
  }
  assert.throws(
    () => assertRouteHasPermission("partner", "GET", "/console/secret-page"),
    /has no permission/,
  );
  assert.throws(
    () => assertRouteHasPermission("operator", ["GET", "POST"], "/console/admin/new-form"),
    /has no permission/,
  );
  assert.doesNotThrow(() => assertRouteHasPermission("partner", "GET", "/console/account/two-factor"));
});

test("the partner roles' matrix: each page and form opens or answers 403 and changes nothing", async () => {
  await walk("partner", PARTNER_ROLES, PARTNER_MATRIX);
});

test("the operator roles' matrix: each page and form opens or answers 403 and changes nothing", async () => {
  await walk("operator", OPERATOR_ROLES, OPERATOR_MATRIX);
});

test("a viewer sees keys by name but no form to change anything, and the nav lists only what the role opens", async () => {
  const viewer = await signedIn("partner", "viewer");
  const keys = await (await fetch(`${base}/console/keys`, { headers: { cookie: viewer.cookie } })).text();
  assert.match(keys, new RegExp(partner.key_id));
  assert.ok(!/action="\/console\/keys/.test(keys), "no issue or revoke form");
  const hooks = await (
    await fetch(`${base}/console/webhooks`, { headers: { cookie: viewer.cookie } })
  ).text();
  assert.ok(
    !/<form method="post" action="\/console\/webhooks/.test(hooks) && !/Add an endpoint/.test(hooks),
    "no add form, nor its heading",
  );
  const team = await (await fetch(`${base}/console/team`, { headers: { cookie: viewer.cookie } })).text();
  assert.ok(!/action="\/console\/team\//.test(team), "no team form");
  assert.ok(!/Send invitation/.test(team));
  const support = await signedIn("partner", "support");
  const home = await (await fetch(`${base}/console`, { headers: { cookie: support.cookie } })).text();
  const nav = /<nav[\s\S]*?<\/nav>/.exec(home)![0];
  assert.ok(!nav.includes('href="/console/keys"') && !nav.includes('href="/console/webhooks"'), nav);
  assert.ok(nav.includes('href="/console/orders"') && nav.includes('href="/console/team"'), nav);
  const opSupport = await signedIn("operator", "support");
  const opHome = await (
    await fetch(`${base}/console/admin`, { headers: { cookie: opSupport.cookie } })
  ).text();
  const opNav = /<nav[\s\S]*?<\/nav>/.exec(opHome)![0];
  assert.ok(!opNav.includes("/console/admin/ledger") && !opNav.includes("/console/admin/catalog"), opNav);
  assert.ok(!/Create partner/.test(opHome), "no create form for support");
});

// Single sign-on settings and the start of a sign-in (issue 31), over real HTTP against a real
// OpenID provider (oidc-provider on loopback): only an owner may set them (403 for every other
// role, nothing kept); the issuer must be https on a public address unless SSO_ALLOW_PRIVATE_NETWORKS
// (refused in production); a domain belongs to one partner (409 naming it); a blank secret keeps the
// one set; and the start sends the browser to the provider with PKCE (S256), state and nonce kept
// server-side under a short-lived SameSite=Lax cookie.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { ConfigError, loadConfig } from "../src/config.ts";
import { readSsoSettings, saveSsoSettings, ssoSecrets } from "../src/people/configure-sso.ts";
import { csrfToken } from "../src/people/sessions.ts";
import { attemptHash, MAX_ATTEMPTS_PER_ADDRESS } from "../src/people/sign-in-with-sso.ts";
import { createTestApp } from "./support/app.ts";
import { startOidcProvider } from "./support/oidc-provider.ts";
import { addPerson, signInCookie } from "./support/people.ts";
import { freePort } from "./support/ports.ts";

const app = await createTestApp({ sso_allow_private_networks: true });
const base = await app.app.listen({ port: 0, host: "127.0.0.1" });
const provider = await startOidcProvider(`${base}/console/sso/callback`);

async function send(
  session_id: string,
  method: "GET" | "POST",
  path: string,
  fields: Record<string, string> = {},
) {
  const answer = await fetch(`${base}${path}`, {
    method,
    redirect: "manual",
    headers: {
      origin: base,
      cookie: `console_partner=${session_id}`,
      ...(method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
    },
    ...(method === "POST"
      ? { body: new URLSearchParams({ ...fields, _csrf: csrfToken(session_id) }).toString() }
      : {}),
  });
  return { status: answer.status, body: await answer.text(), headers: answer.headers };
}

/** A team whose owner's address is at each of `domains` (the first the owner's, the rest colleagues'): the domains it may vouch for. */
async function teamWithOwner(name: string, ...domains: string[]) {
  const partner = await app.createPartner(name, 0);
  const tag = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const [first, ...rest] = domains;
  const owner = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
    ...(first ? { email: `owner-${tag}@${first}` } : {}),
  });
  for (const domain of rest)
    await addPerson(app.database.pool, {
      realm: "partner",
      role: "viewer",
      partner_id: partner.partner_id,
      email: `colleague-${tag}@${domain}`,
    });
  return { partner_id: partner.partner_id, session: await signInCookie(base, owner) };
}

function settings(domains: string, secret: string | null = provider.client_secret): Record<string, string> {
  return {
    issuer: provider.issuer,
    client_id: provider.client_id,
    domains,
    ...(secret === null ? {} : { client_secret: secret }),
  };
}

const acme = await teamWithOwner("Acme SSO", "acme-sso.test");

test("only an owner opens or changes the SSO settings: every other role is 403 and nothing is kept", async () => {
  for (const role of ["admin", "developer", "support", "finance", "viewer"]) {
    const person = await addPerson(app.database.pool, {
      realm: "partner",
      role,
      partner_id: acme.partner_id,
    });
    const session = await signInCookie(base, person);
    const page = await send(session, "GET", "/console/team/sso");
    assert.equal(page.status, 403, role);
    assert.match(page.body, /Your role does not allow this/);
    const post = await send(session, "POST", "/console/team/sso", settings(`${role}.acme.test`));
    assert.equal(post.status, 403, role);
    const remove = await send(session, "POST", "/console/team/sso/remove");
    assert.equal(remove.status, 403, role);
  }
  assert.equal(await readSsoSettings(app.db, acme.partner_id), null);
  const owner_page = await send(acme.session, "GET", "/console/team/sso");
  assert.equal(owner_page.status, 200);
  assert.match(owner_page.body, /Single sign-on is off/);
});

test("an owner saves the settings; a blank secret keeps the one set; a bad domain is 422", async () => {
  const saved = await send(
    acme.session,
    "POST",
    "/console/team/sso",
    settings("acme-sso.test, Acme-Sso.test. sub.acme-sso.test"),
  );
  assert.equal(saved.status, 303);
  assert.equal(saved.headers.get("location"), "/console/team/sso?saved=1");
  const kept = await readSsoSettings(app.db, acme.partner_id);
  assert.deepEqual(kept?.domains, ["acme-sso.test", "sub.acme-sso.test"]);

  const again = await send(acme.session, "POST", "/console/team/sso", settings("acme-sso.test", null));
  assert.equal(again.status, 303, again.body);
  const row = await app.database.pool.query(
    "select client_secret_sealed from sso_connections where partner_id = $1",
    [acme.partner_id],
  );
  assert.equal(
    ssoSecrets(app.ctx.config).open(acme.partner_id, row.rows[0].client_secret_sealed),
    provider.client_secret,
  );
  assert.deepEqual((await readSsoSettings(app.db, acme.partner_id))?.domains, ["acme-sso.test"]);

  for (const domains of ["not a domain!", "localhost", "-bad.test", ""]) {
    const refused = await send(acme.session, "POST", "/console/team/sso", settings(domains));
    assert.equal(refused.status, 422, domains);
    assert.match(refused.body, /class="notice error"/);
  }
  assert.deepEqual((await readSsoSettings(app.db, acme.partner_id))?.domains, ["acme-sso.test"], "unchanged");
});

test("an issuer whose discovery does not answer is refused (422) and nothing is kept", async () => {
  const other = await teamWithOwner("Nowhere SSO", "nowhere.test");
  const closed = `http://127.0.0.1:${await freePort()}`;
  const refused = await send(other.session, "POST", "/console/team/sso", {
    ...settings("nowhere.test"),
    issuer: closed,
  });
  assert.equal(refused.status, 422);
  assert.match(refused.body, /discovery document could not be read/);
  assert.ok(!refused.body.includes(provider.client_secret), "the secret typed is not echoed");
  assert.equal(await readSsoSettings(app.db, other.partner_id), null);
});

test("a domain another partner vouches for is refused with 409 naming it, and nothing of the setting is kept", async () => {
  const rival = await teamWithOwner("Rival SSO", "rival.test", "acme-sso.test");
  const refused = await send(
    rival.session,
    "POST",
    "/console/team/sso",
    settings("rival.test\nacme-sso.test"),
  );
  assert.equal(refused.status, 409);
  assert.match(refused.body, /already vouches for acme-sso\.test/);
  assert.equal(await readSsoSettings(app.db, rival.partner_id), null);
  const audited = await app.database.pool.query(
    "select count(*)::int as n from audit_log where partner_id = $1 and action = 'team.sso_updated'",
    [rival.partner_id],
  );
  assert.equal(audited.rows[0].n, 0);
});

test("without SSO_ALLOW_PRIVATE_NETWORKS a loopback issuer is refused: http, a loopback literal, a name resolving to loopback", async () => {
  const team = await teamWithOwner("Strict SSO", "strict.test");
  const ctx = { db: app.db, config: { ...app.ctx.config, sso_allow_private_networks: false } };
  const actor = { type: "user" as const, id: null, ip: "127.0.0.1" };
  const port = new URL(provider.issuer).port;
  const cases: Array<[string, RegExp]> = [
    [provider.issuer, /must be an https URL/],
    [`https://127.0.0.1:${port}`, /127\.0\.0\.1 is not a public address/],
    [`https://[::1]:${port}`, /::1 is not a public address/],
    [`https://localhost:${port}`, /localhost resolves to (127\.0\.0\.1|::1), not a public address/],
  ];
  for (const [issuer, expected] of cases) {
    const refused = await saveSsoSettings(ctx, actor, team.partner_id, {
      issuer,
      client_id: provider.client_id,
      client_secret: provider.client_secret,
      domains: "strict.test",
    });
    assert.equal(refused?.status, 422, issuer);
    assert.equal(refused?.field, "issuer");
    assert.match(refused!.message, expected, issuer);
  }
  assert.equal(await readSsoSettings(app.db, team.partner_id), null);
});

test("SSO_ALLOW_PRIVATE_NETWORKS=true is refused outside the sandbox", () => {
  assert.equal(loadConfig({}).sso_allow_private_networks, false);
  assert.equal(loadConfig({ SSO_ALLOW_PRIVATE_NETWORKS: "true" }).sso_allow_private_networks, true);
  assert.throws(
    () => loadConfig({ APP_ENV: "production", SSO_ALLOW_PRIVATE_NETWORKS: "true" }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.problems.some(
        (p) => p.variable === "SSO_ALLOW_PRIVATE_NETWORKS" && /refused outside the sandbox/.test(p.problem),
      ),
  );
  assert.throws(
    () => loadConfig({ SSO_ALLOW_PRIVATE_NETWORKS: "yes" }),
    /SSO_ALLOW_PRIVATE_NETWORKS: expected one of true, false/,
  );
});

test("Sign in with SSO sends the browser to the provider with PKCE S256, state and nonce, kept server-side for 10 minutes", async () => {
  const answer = await fetch(`${base}/console/sso/start`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: "Someone@ACME-SSO.test" }).toString(),
  });
  assert.equal(answer.status, 200);
  const set_cookie = answer.headers.get("set-cookie") ?? "";
  const attempt_id = /^console_sso=([A-Za-z0-9_-]{43});/.exec(set_cookie)?.[1];
  assert.ok(attempt_id, set_cookie);
  for (const attribute of ["Path=/console/sso", "HttpOnly", "SameSite=Lax", "Max-Age=600"])
    assert.ok(set_cookie.includes(attribute), attribute);
  const body = await answer.text();
  const target = /<meta http-equiv="refresh" content="0; url=([^"]+)">/
    .exec(body)?.[1]
    ?.replaceAll("&amp;", "&");
  assert.ok(target, "the page moves on to the provider");
  const url = new URL(target);
  assert.equal(url.origin, provider.issuer);
  const params = url.searchParams;
  assert.equal(params.get("response_type"), "code");
  assert.equal(params.get("client_id"), provider.client_id);
  assert.equal(params.get("redirect_uri"), `${base}/console/sso/callback`);
  assert.equal(params.get("code_challenge_method"), "S256");
  assert.match(params.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.match(params.get("scope") ?? "", /\bopenid\b.*\bemail\b/);
  assert.equal(params.get("login_hint"), "Someone@ACME-SSO.test");
  const row = await app.database.pool.query(
    `select state, nonce, code_verifier, extract(epoch from expires_at - created_at)::int as lifetime_s
     from sso_attempts where attempt_hash = $1`,
    [attemptHash(attempt_id)],
  );
  assert.equal(row.rows.length, 1, "kept under the id's hash, not the id");
  assert.equal(row.rows[0].state, params.get("state"));
  assert.equal(row.rows[0].nonce, params.get("nonce"));
  assert.ok(!target.includes(row.rows[0].code_verifier), "the verifier never leaves the server");
  assert.equal(row.rows[0].lifetime_s, 600);

  const cross_site = await fetch(`${base}/console/sso/start`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
    body: new URLSearchParams({ email: "someone@acme-sso.test" }).toString(),
  });
  assert.equal(cross_site.status, 403, "a form from another site starts nothing");
});

test("an address has at most 20 sign-ins with SSO under way: the next start is 429 and keeps nothing", async () => {
  const live = async () =>
    (await app.database.pool.query("select count(*)::int as n from sso_attempts where expires_at > now()"))
      .rows[0].n;
  const start = () =>
    fetch(`${base}/console/sso/start`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
      body: new URLSearchParams({ email: "someone@acme-sso.test" }).toString(),
    });
  while ((await live()) < MAX_ATTEMPTS_PER_ADDRESS) assert.equal((await start()).status, 200);
  const refused = await start();
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "600");
  assert.match(await refused.text(), /Too many sign-ins with SSO were started from your address/);
  assert.equal(await live(), MAX_ATTEMPTS_PER_ADDRESS);
});

test("a provider whose metadata sends the browser to a javascript: URL is refused (502), and no attempt is kept", async () => {
  const fake = createServer((request, response) => {
    const issuer = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    if (request.url !== "/.well-known/openid-configuration") return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        issuer,
        authorization_endpoint: "javascript:alert(document.domain)",
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      }),
    );
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  after(() => fake.close());
  const team = await teamWithOwner("Fake IdP", "fake-idp.test");
  const saved = await send(team.session, "POST", "/console/team/sso", {
    ...settings("fake-idp.test"),
    issuer: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
  });
  assert.equal(saved.status, 303, saved.body);
  await app.database.pool.query("delete from sso_attempts");
  const start = await fetch(`${base}/console/sso/start`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: "someone@fake-idp.test" }).toString(),
  });
  assert.equal(start.status, 502);
  const body = await start.text();
  assert.match(body, /authorization endpoint is not an https address/);
  assert.ok(!body.includes("javascript:"));
  assert.equal((await app.database.pool.query("select count(*)::int as n from sso_attempts")).rows[0].n, 0);
});

test("once removed, the domains are free and Sign in with SSO says it is not set up", async () => {
  const removed = await send(acme.session, "POST", "/console/team/sso/remove");
  assert.equal(removed.status, 303);
  assert.equal(await readSsoSettings(app.db, acme.partner_id), null);
  const start = await fetch(`${base}/console/sso/start`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: "someone@acme-sso.test" }).toString(),
  });
  assert.equal(start.status, 400);
  assert.match(await start.text(), /Single sign-on is not set up for acme-sso\.test/);
  const actions = await app.database.pool.query(
    "select details from audit_log where partner_id = $1 and action = 'team.sso_updated' order by audit_seq",
    [acme.partner_id],
  );
  assert.equal(actions.rows.length, 3, "saved, saved again, removed");
  assert.equal(actions.rows[2].details.removed, true);
});

test("a team vouches only for domains of its own people who proved their address, and never for a mailbox provider's", async () => {
  const team = await teamWithOwner("Claimant SSO", "claimant.test");
  for (const [domains, expected] of [
    ["someone-else.test", /No active person of this team has an address at someone-else\.test/],
    ["claimant.test\nsomeone-else.test", /someone-else\.test/],
    ["gmail.com", /mailbox provider/],
  ] as const) {
    const refused = await send(team.session, "POST", "/console/team/sso", settings(domains));
    assert.equal(refused.status, 422, domains);
    assert.match(refused.body, expected);
  }
  assert.equal(await readSsoSettings(app.db, team.partner_id), null, "nothing kept");
  // Its own domain and a subdomain of it are fine.
  const saved = await send(
    team.session,
    "POST",
    "/console/team/sso",
    settings("claimant.test\neu.claimant.test"),
  );
  assert.equal(saved.status, 303, saved.body);
});

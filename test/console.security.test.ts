// The console's security over plain HTTP against the real service process, the carrier simulator
// and PostgreSQL (no browser needed): which session an ambiguous Cookie header gets, and what a
// browser may keep after sign-out.
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { test } from "node:test";
import { createTestApp } from "./support/app.ts";
import { addPerson, signInCookie } from "./support/people.ts";
import { createWorld, newCart, newPartner, submit } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;

/** A partner's owner signs in through the console's form: the session cookie's value. */
async function signIn(partner: { partner_id: string }): Promise<string> {
  const owner = await addPerson(world.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  return signInCookie(base, owner);
}

test("two session cookies of one name (one tossed in from a sibling subdomain) are no session, not the first", async () => {
  // Cookie tossing: a page on a sibling subdomain can set `console_partner` for the parent domain
  // with a longer Path, and the browser then sends it FIRST, beside the victim's own cookie. Taking
  // the first would serve the victim's clicks under the attacker's session (fixation).
  const attacker = await newPartner(base, 0, "Attacker Ltd");
  const victim = await newPartner(base, 0, "Victim Travel");
  const tossed = await signIn(attacker);
  const own = await signIn(victim);
  const alone = await fetch(`${base}/console/webhooks`, {
    redirect: "manual",
    headers: { cookie: `console_partner=${own}` },
  });
  assert.equal(alone.status, 200, "the victim's own cookie alone works");
  const both = await fetch(`${base}/console/webhooks`, {
    redirect: "manual",
    headers: { cookie: `console_partner=${tossed}; other=1; console_partner=${own}` },
  });
  const page = both.status === 200 ? await both.text() : "";
  assert.ok(!page.includes("Attacker Ltd"), "never served as the attacker's session");
  assert.equal(both.status, 303, "ambiguous: signed out");
  assert.equal(both.headers.get("location"), "/console/sign-in?ended=1");
  const change = await fetch(`${base}/console/webhooks`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: `console_partner=${tossed}; console_partner=${own}`,
      "content-type": "application/x-www-form-urlencoded",
      origin: base,
    },
    body: new URLSearchParams({ url: "https://example.com/hook" }).toString(),
  });
  assert.equal(change.status, 401, "a change under an ambiguous cookie is refused before its body is read");
});

test("the eSIM's QR code (its activation code) is never kept in the browser's cache, like the pages", async () => {
  const partner = await newPartner(base, 10_000, "Shared Kiosk Travel");
  const cart = await newCart(base, partner.api_key);
  const bought = await submit(base, partner.api_key, cart.cart_key, {});
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  const session = await signIn(partner);
  const headers = { cookie: `console_partner=${session}` };
  const page = await fetch(`${base}/console/esims/${bought.body.esim_iccid}`, { headers });
  assert.equal(page.headers.get("cache-control"), "no-store");
  const qr = await fetch(`${base}/console/esims/${bought.body.esim_iccid}/qr.png`, { headers });
  assert.equal(qr.status, 200);
  assert.equal(qr.headers.get("content-type"), "image/png");
  assert.equal(qr.headers.get("cache-control"), "no-store", "left on a shared computer after sign-out");
});

/** One request to the service as a browser reaching it by `host` would send it (node:http: fetch cannot set Host). */
function asHost(
  host: string,
  path: string,
  options: { method?: string; cookie?: string; form?: Record<string, string> } = {},
): Promise<{ status: number; location: string; cookie: string; body: string }> {
  const { port } = new URL(base);
  const body = options.form ? new URLSearchParams(options.form).toString() : "";
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path,
        headers: {
          host: `${host}:${port}`,
          origin: `https://${host}:${port}`,
          ...(options.cookie ? { cookie: options.cookie } : {}),
          ...(options.form
            ? {
                "content-type": "application/x-www-form-urlencoded",
                "content-length": Buffer.byteLength(body),
              }
            : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            location: String(response.headers.location ?? ""),
            cookie: String(response.headers["set-cookie"] ?? ""),
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

test("over HTTPS the session is only the __Host- cookie: a plain one, which a sibling subdomain could plant for a user with none, is no session", async () => {
  const host = "console.example.com";
  const partner = await newPartner(base, 0, "Hosted Cookie Travel");
  const owner = await addPerson(world.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const signedIn = await asHost(host, "/console/sign-in", {
    method: "POST",
    form: { email: owner.email, password: owner.password },
  });
  assert.equal(signedIn.status, 303);
  const value =
    /^__Host-console_partner=([A-Za-z0-9_-]{43}); Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/.exec(
      signedIn.cookie,
    )?.[1];
  assert.ok(value, `a __Host- cookie: ${signedIn.cookie}`);
  const own = await asHost(host, "/console/webhooks", { cookie: `__Host-console_partner=${value}` });
  assert.equal(own.status, 200, "the __Host- cookie is the session");
  // What a tossing sibling can set: no prefix (a __Host- cookie with Domain is refused by browsers).
  const planted = await asHost(host, "/console/webhooks", { cookie: `console_partner=${value}` });
  assert.equal(planted.status, 303, "a cookie without the prefix is ignored over HTTPS");
  assert.equal(planted.location, "/console/sign-in?ended=1");
  const csrf = /name="_csrf" value="([^"]+)"/.exec(own.body)?.[1];
  assert.ok(csrf, "the page's CSRF token");
  const signedOut = await asHost(host, "/console/sign-out", {
    method: "POST",
    cookie: `__Host-console_partner=${value}`,
    form: { _csrf: csrf },
  });
  assert.equal(signedOut.status, 303);
  assert.match(
    signedOut.cookie,
    /^__Host-console_partner=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0; Secure$/,
  );
});

test("in production the session cookie is Secure and __Host- even when a proxy calls the service localhost", async () => {
  const app = await createTestApp({ app_env: "production" });
  const partner = await app.createPartner("Proxied Travel");
  const owner = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const answer = await app.app.inject({
    method: "POST",
    url: "/console/sign-in",
    headers: {
      host: "localhost",
      origin: "http://localhost",
      "content-type": "application/x-www-form-urlencoded",
    },
    payload: new URLSearchParams({ email: owner.email, password: owner.password }).toString(),
  });
  assert.equal(answer.statusCode, 303, answer.body);
  assert.match(
    String(answer.headers["set-cookie"]),
    /^__Host-console_partner=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/,
  );
});

test("in production a passkey's relying party is PUBLIC_BASE_URL's host, whatever Host header a request carries", async () => {
  const app = await createTestApp({ app_env: "production", public_base_url: "https://console.example.com" });
  const partner = await app.createPartner("Hosted Travel");
  const owner = await addPerson(app.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const forged = { host: "console.attacker.example", origin: "https://console.attacker.example" };
  const signedIn = await app.app.inject({
    method: "POST",
    url: "/console/sign-in",
    headers: { ...forged, "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams({ email: owner.email, password: owner.password }).toString(),
  });
  assert.equal(signedIn.statusCode, 303, signedIn.body);
  const cookie = String(signedIn.headers["set-cookie"]).split(";")[0]!;
  const account = await app.app.inject({
    method: "GET",
    url: "/console/account/two-factor",
    headers: { ...forged, cookie },
  });
  assert.equal(account.statusCode, 200, account.body);
  const options = /data-passkey="register" data-options="([^"]+)"/.exec(account.body)?.[1];
  assert.ok(options, "the passkey form carries its registration options");
  const parsed = JSON.parse(options.replaceAll("&quot;", '"').replaceAll("&amp;", "&")) as {
    rp: { id: string };
  };
  assert.equal(parsed.rp.id, "console.example.com");
  assert.doesNotMatch(account.body, /attacker/);
});

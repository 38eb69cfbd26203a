// Console session cookies against the real service process and PostgreSQL, over plain HTTP (no
// browser needed): which session a request is served under when its Cookie header is ambiguous.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createWorld, newPartner } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;

/** Signs in through the console's form and returns the session cookie's value. */
async function signIn(api_key: string): Promise<string> {
  const answer = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ secret: api_key }).toString(),
  });
  assert.equal(answer.status, 303);
  const value = /^console_partner=([A-Za-z0-9_-]{43});/.exec(answer.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(value, "a session cookie");
  return value;
}

test("two session cookies of one name (one tossed in from a sibling subdomain) are no session, not the first", async () => {
  // Cookie tossing: a page on a sibling subdomain can set `console_partner` for the parent domain
  // with a longer Path, and the browser then sends it FIRST, beside the victim's own cookie. Taking
  // the first would serve the victim's clicks under the attacker's session (fixation).
  const attacker = await newPartner(base, 0, "Attacker Ltd");
  const victim = await newPartner(base, 0, "Victim Travel");
  const tossed = await signIn(attacker.api_key);
  const own = await signIn(victim.api_key);
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

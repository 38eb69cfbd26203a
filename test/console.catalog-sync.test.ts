// The console's "Sync from supplier" form (src/console/operator-catalog.ts) against the sandbox's
// built-in eSIM Go fake, started in-process by the request as the CLI starts it: the report on the
// page, the suppliers table, and the packages written.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createTestApp } from "./support/app.ts";
import { addPerson, signInCookie } from "./support/people.ts";

const t = await createTestApp({ app_env: "sandbox", esimgo_api_url: null, airalo_api_url: null });
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });
after(() => t.app.close());

async function operator(): Promise<{ cookie: string; csrf: string }> {
  const person = await addPerson(t.database.pool, { realm: "operator", role: "admin" });
  const cookie = `console_operator=${await signInCookie(base, person)}`;
  const page = await (await fetch(`${base}/console/admin/catalog`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf);
  assert.match(page, /Sync from supplier/);
  return { cookie, csrf };
}

function post(s: { cookie: string; csrf: string }, fields: Record<string, string>) {
  return fetch(`${base}/console/admin/catalog/sync`, {
    method: "POST",
    headers: { cookie: s.cookie, origin: base, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: s.csrf, ...fields }).toString(),
  });
}

test("the operator syncs eSIM Go from the catalog page and sees the report and the supplier's packages", async () => {
  const s = await operator();
  const answer = await post(s, { supplier: "esimgo", markup_percent: "15", destinations: "fr" });
  const body = await answer.text();
  assert.equal(answer.status, 200, body.slice(0, 500));
  assert.match(body, /Synced from eSIM Go\./);
  assert.match(body, /Added \(8\)/);
  assert.match(body, /esimgo-esim_1GB_7D_FR_V2/);
  assert.match(body, /<td>eSIM Go<\/td><td class="num">8<\/td>/);
  const stored = await t.database.pool.query(
    "select wholesale_minor, supplier from packages where package_id = 'esimgo-esim_1GB_7D_FR_V2'",
  );
  assert.deepEqual(stored.rows, [{ wholesale_minor: 229, supplier: "esimgo" }]);
  const audit = await t.database.pool.query(
    "select actor_type from audit_log where action = 'catalog.synced'",
  );
  assert.deepEqual(audit.rows, [{ actor_type: "operator" }]);

  const again = await (
    await post(s, { supplier: "esimgo", markup_percent: "15", destinations: "FR" })
  ).text();
  assert.match(again, /Synced from eSIM Go\./);
  assert.doesNotMatch(again, /Added \(/);
});

test("a bad markup is refused and a supplier pricing in another currency is refused with its reason", async () => {
  const s = await operator();
  const bad = await post(s, { supplier: "esimgo", markup_percent: "abc" });
  assert.equal(bad.status, 400);
  const eur = await createTestApp({ app_env: "sandbox", currency: "EUR", airalo_api_url: null });
  const eurBase = await eur.app.listen({ port: 0, host: "127.0.0.1" });
  try {
    const person = await addPerson(eur.database.pool, { realm: "operator", role: "admin" });
    const cookie = `console_operator=${await signInCookie(eurBase, person)}`;
    const page = await (await fetch(`${eurBase}/console/admin/catalog`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const answer = await fetch(`${eurBase}/console/admin/catalog/sync`, {
      method: "POST",
      headers: { cookie, origin: eurBase, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, supplier: "airalo", markup_percent: "10" }).toString(),
    });
    assert.equal(answer.status, 422);
    assert.match(await answer.text(), /Nothing synced: airalo prices in USD and the catalog is in EUR/);
  } finally {
    await eur.app.close();
  }
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";
import { importCatalog } from "../src/catalog/import-catalog.ts";
import { listDestinationPackages } from "../src/catalog/list-destination-packages.ts";
import { seedDefaultCatalogIfEmpty } from "../src/catalog/seed-catalog.ts";
import { CLI_ACTOR } from "../src/shared/actor.ts";
import { createTestApp, type TestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";

/** The app (it mounts the catalog routes under /v1) over a database seeded with the default catalog. */
async function catalogApp(): Promise<TestApp> {
  const database = await createTestDatabase();
  await seedDefaultCatalogIfEmpty(database.pool, "USD");
  return createTestApp({}, { database });
}

const app = await catalogApp();
const partner = await app.createPartner();
const headers = app.auth(partner.api_key);

function get(code: string, extra: Record<string, string> = {}) {
  return app.app.inject({
    method: "GET",
    url: `/v1/esim/destination/${code}/packages`,
    headers: { ...headers, ...extra },
  });
}

function assertProblem(response: Awaited<ReturnType<typeof get>>, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
  assert.equal(response.json().code, code);
}

test("a destination's packages come as JSON with a strong ETag and a private max-age", async () => {
  const response = await get("FR");
  assert.equal(response.statusCode, 200);
  assert.equal(response.headers["content-type"], "application/json; charset=utf-8");
  assert.match(String(response.headers.etag), /^"[A-Za-z0-9_-]+"$/);
  assert.equal(response.headers["cache-control"], "private, max-age=60");
  assert.deepEqual(response.json(), await listDestinationPackages(app.ctx.pool, "FR"));
  assert.equal(response.json().data[0].wholesale_price.amount_minor, 350);
});

test("If-None-Match with the ETag answers 304 with no body; a weak or listed match too", async () => {
  const first = await get("DE");
  const etag = String(first.headers.etag);
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
    const again = await get("DE", { "if-none-match": ifNoneMatch });
    assert.equal(again.statusCode, 304, ifNoneMatch);
    assert.equal(again.body, "");
    assert.equal(again.headers["content-length"], undefined);
    assert.equal(again.headers.etag, etag);
    assert.equal(again.headers["cache-control"], "private, max-age=60");
  }
  const stale = await get("DE", { "if-none-match": '"not-the-etag"' });
  assert.equal(stale.statusCode, 200);
  assert.equal(stale.body, first.body);
});

test("after an import the ETag changes and the old one no longer revalidates", async () => {
  // An app of its own: the import retires most of the catalog the other tests read.
  const own = await catalogApp();
  const ownPartner = await own.createPartner();
  const request = (extra: Record<string, string> = {}) =>
    own.app.inject({
      method: "GET",
      url: "/v1/esim/destination/fr/packages",
      headers: { ...own.auth(ownPartner.api_key), ...extra },
    });
  const before = await request();
  await importCatalog(own.ctx.pool, "test/fixtures/catalog-sample.csv", {
    currency: "USD",
    actor: CLI_ACTOR,
  });
  const after = await request({ "if-none-match": String(before.headers.etag) });
  assert.equal(after.statusCode, 200);
  assert.notEqual(after.headers.etag, before.headers.etag);
  assert.equal(after.json().data[0].wholesale_price.amount_minor, 300);
});

test("a lower-case code works and answers with the upper-case code", async () => {
  const response = await get("fr");
  assert.equal(response.statusCode, 200);
  assert.equal(response.json().destination_code, "FR");
});

test("an unknown destination is 404 destination_not_found as problem+json", async () => {
  assertProblem(await get("AA"), 404, "destination_not_found");
});

test("a malformed destination code is 400 invalid_request", async () => {
  for (const malformed of ["F1", "FRA", "f"]) assertProblem(await get(malformed), 400, "invalid_request");
});

test("without an API key the catalog is 401 unauthorized", async () => {
  const response = await app.app.inject({ method: "GET", url: "/v1/esim/destination/FR/packages" });
  assertProblem(response, 401, "unauthorized");
});

test("the OpenAPI document describes the route, its 200, 304 and error responses", async () => {
  const document = (await app.app.inject({ url: "/openapi.json" })).json();
  const operation = document.paths["/v1/esim/destination/{destination_code}/packages"].get;
  assert.equal(operation.operationId, "listDestinationPackages");
  assert.deepEqual(operation.tags, ["Catalog"]);
  assert.ok(operation.responses["200"].content["application/json"].schema);
  assert.ok(operation.responses["200"].headers.ETag);
  assert.equal(operation.responses["304"].content, undefined);
  for (const status of ["400", "401", "404"]) assert.ok(operation.responses[status], status);
});

test("Accept-Encoding gzip gets the same body gzipped under its own ETag; either tag revalidates; q=0 refuses it", async () => {
  const plain = await get("FR");
  const zipped = await get("FR", { "accept-encoding": "br, gzip;q=0.8" });
  assert.equal(zipped.statusCode, 200);
  assert.equal(zipped.headers["content-encoding"], "gzip");
  assert.equal(plain.headers["content-encoding"], undefined);
  for (const answer of [plain, zipped]) assert.equal(answer.headers.vary, "accept-encoding");
  const body = gunzipSync(zipped.rawPayload);
  assert.deepEqual(body, plain.rawPayload, "the same JSON bytes");
  assert.ok(zipped.rawPayload.length * 4 < plain.rawPayload.length, "a fraction of the size");
  assert.notEqual(zipped.headers.etag, plain.headers.etag);
  assert.match(String(zipped.headers.etag), /^"[A-Za-z0-9_-]+-gzip"$/);
  for (const tag of [plain.headers.etag, zipped.headers.etag]) {
    const again = await get("FR", { "accept-encoding": "gzip", "if-none-match": String(tag) });
    assert.equal(again.statusCode, 304, `revalidated with ${tag}`);
  }
  for (const refused of ["gzip;q=0", "identity", "br"]) {
    const answer = await get("FR", { "accept-encoding": refused });
    assert.equal(answer.headers["content-encoding"], undefined, refused);
    assert.deepEqual(answer.rawPayload, plain.rawPayload, refused);
  }
});

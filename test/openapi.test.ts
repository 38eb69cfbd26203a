// The OpenAPI document: the committed copy is what the app serves, and it documents every
// error a route can answer with a code from the closed set.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { servedOpenapi } from "../scripts/write-openapi.ts";
import { ALTERNATE_STATUS, ERROR_CODES } from "../src/shared/errors.ts";
import { pageParameters } from "../src/shared/schemas.ts";

const served = await servedOpenapi();
const document = JSON.parse(served);

test("the committed docs/openapi.json is exactly what the app serves", async () => {
  const committed = await readFile("docs/openapi.json", "utf8");
  assert.equal(committed, served, "run `npm run openapi:write` and commit docs/openapi.json");
});

test("every operation has an id, a summary, security, and problem+json errors with known codes", () => {
  let operations = 0;
  for (const [path, methods] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      operations++;
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(operation.operationId, `${where} has an operationId`);
      assert.ok(operation.summary, `${where} has a summary`);
      if (path.startsWith("/v1/")) {
        assert.deepEqual(
          operation.security,
          [{ bearerAuth: [] }, { apiKeyHeader: [] }],
          `${where} needs a key`,
        );
        for (const status of ["400", "401", "429", "500"]) {
          assert.ok(operation.responses[status], `${where} documents ${status}`);
        }
      }
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (Number(status) < 400) continue;
        const content = response.content?.["application/problem+json"];
        assert.ok(content, `${where} ${status} has a body schema`);
        const codes: string[] = content.schema["x-error-codes"] ?? [];
        assert.ok(codes.length > 0, `${where} ${status} lists its codes`);
        for (const code of codes) {
          assert.ok(code in ERROR_CODES, `${where} ${status}: ${code} is a known code`);
          // A code's own status, or the one documented second status (src/shared/errors.ts).
          const alternate = (ALTERNATE_STATUS as Record<string, number>)[code];
          assert.ok(
            ERROR_CODES[code as keyof typeof ERROR_CODES].status === Number(status) ||
              alternate === Number(status),
            `${where} ${status}: ${code} is not answered with this status`,
          );
        }
      }
    }
  }
  assert.ok(operations >= 10);
});

test("every cursor-paged list takes `limit` and `cursor` as pageParameters declares them, nothing of its own", () => {
  const lists: string[] = [];
  for (const [path, methods] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      const query = new Map<string, any>(
        (operation.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => [p.name, p]),
      );
      if (!query.has("cursor")) continue;
      const where = `${method.toUpperCase()} ${path}`;
      lists.push(where);
      const default_size = Number(/default (\d+)\./.exec(query.get("limit")?.description ?? "")?.[1]);
      assert.ok(Number.isInteger(default_size), `${where}: limit names its default`);
      const shared = pageParameters(default_size);
      for (const name of ["limit", "cursor"] as const) {
        const { description, ...schema } = JSON.parse(JSON.stringify(shared[name]));
        assert.deepEqual(query.get(name).schema, schema, `${where}: ${name}`);
        assert.equal(query.get(name).description, description, `${where}: ${name}'s description`);
      }
    }
  }
  assert.ok(lists.includes("GET /v1/profile/wallet/transactions"), lists.join(", "));
  assert.ok(lists.length >= 3, lists.join(", "));
});

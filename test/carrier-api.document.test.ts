// The carrier API's OpenAPI document (docs/carrier-api.openapi.json) is the one built from the
// schemas the adapter and the simulator use: regenerate with `npm run carrier-api:write`.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { carrierApiDocument } from "../src/simulators/carrier/carrier-api-document.ts";

test("docs/carrier-api.openapi.json is the document built from the protocol's schemas", async () => {
  const committed = JSON.parse(await readFile("docs/carrier-api.openapi.json", "utf8"));
  assert.deepEqual(committed, JSON.parse(JSON.stringify(carrierApiDocument())));
  for (const path of [
    "/profiles",
    "/topups",
    "/outcomes/{reference}",
    "/esims/{iccid}",
    "/profiles/cancel",
    "/bundles/cancel",
  ]) {
    assert.ok(committed.paths[path], path);
  }
});

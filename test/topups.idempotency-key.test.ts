// The Idempotency-Key header and the request fingerprint: pure functions, no database.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import fc from "fast-check";
import { ApiError } from "../src/shared/errors.ts";
import {
  canonicalJson,
  decodeSfString,
  idempotencyKeyHeader,
  parseIdempotencyKey,
  requestFingerprint,
  requestFingerprints,
} from "../src/topups/idempotency-key.ts";
import { normaliseTopUp } from "../src/topups/submit-topup.ts";

function assertMalformed(header: string) {
  assert.throws(
    () => parseIdempotencyKey(header),
    (error: unknown) =>
      error instanceof ApiError &&
      error.code === "invalid_request" &&
      error.errors?.[0]?.field === "Idempotency-Key",
    JSON.stringify(header),
  );
}

test("no header is no key; a bare key of printable ASCII is itself", () => {
  assert.equal(parseIdempotencyKey(undefined), null);
  for (const key of [
    "a",
    "550e8400-e29b-41d4-a716-446655440000",
    "x".repeat(255),
    "with inner space",
    "a\\b'c",
  ]) {
    assert.equal(parseIdempotencyKey(key), key);
  }
});

test("a quoted structured-field string names the same key as its content", () => {
  assert.equal(parseIdempotencyKey('"abc-123"'), "abc-123");
  assert.equal(parseIdempotencyKey('"a\\"b\\\\c"'), 'a"b\\c');
  assert.equal(parseIdempotencyKey(`"${"\\\\".repeat(255)}"`), "\\".repeat(255));
  assert.equal(decodeSfString('"x"'), "x");
});

test("malformed headers are 400 invalid_request naming the Idempotency-Key field", () => {
  for (const header of [
    "",
    "x".repeat(256),
    " leading",
    "trailing ",
    "caf\u00e9",
    "tab\there",
    '"unterminated',
    '"bad \\x escape"',
    '"escaped end\\"',
    '"inner " quote"',
    '""',
    '"abc";param=1',
    `"${"y".repeat(256)}"`,
  ]) {
    assertMalformed(header);
  }
});

test("the fingerprint ignores key order and whitespace but not values, method or path", () => {
  const body = { iccid: "8901", package_id: "fr-1gb-7d", nested: { b: 1, a: [2, { d: 1, c: 2 }] } };
  const reordered = JSON.parse(
    '{ "nested": {"a":[2,{"c":2,"d":1}], "b":1}, "package_id":"fr-1gb-7d","iccid":"8901" }',
  );
  const path = "/v1/orders/submit-topup";
  assert.deepEqual(requestFingerprint("POST", path, body), requestFingerprint("POST", path, reordered));
  assert.notDeepEqual(
    requestFingerprint("POST", path, body),
    requestFingerprint("POST", path, { ...body, package_id: "fr-3gb-15d" }),
  );
  assert.notDeepEqual(requestFingerprint("POST", path, body), requestFingerprint("PUT", path, body));
  assert.notDeepEqual(requestFingerprint("POST", path, body), requestFingerprint("POST", "/v1/other", body));
  assert.notDeepEqual(
    requestFingerprint("POST", path, { a: null }),
    requestFingerprint("POST", path, {}),
    "an explicit null is a different body from an absent field",
  );
  assert.equal(requestFingerprint("POST", path, body).length, 32);
});

test("canonical JSON is valid JSON of the same value, for any JSON value", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const text = canonicalJson(value);
      assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)));
      assert.equal(canonicalJson(JSON.parse(text)), text);
    }),
  );
});

test("repeated Idempotency-Key header lines are seen as repeated, whatever their case, and refused", () => {
  assert.equal(idempotencyKeyHeader(["Host", "x", "Idempotency-Key", "a"]), "a");
  assert.equal(idempotencyKeyHeader(["Host", "x"]), undefined);
  const twice = idempotencyKeyHeader(["idempotency-key", "a", "Host", "x", "IDEMPOTENCY-KEY", "b"]);
  assert.deepEqual(twice, ["a", "b"]);
  assert.throws(() => parseIdempotencyKey(twice), /sent once/);
});

test("the stored fingerprint is the normalised body's: null and absent, padded and trimmed names are one request", () => {
  const path = "/v1/orders/submit-topup";
  const body = {
    iccid: "8901260000000000014",
    package_id: "fr-3gb-15d",
    external_package_id: "CARRIER-FR-3GB-15D",
    email: "ana@example.com",
    phone: "+14155550123",
    first_name: "Ana",
    last_name: "Lima",
  };
  const stored = (sent: Record<string, unknown>) =>
    requestFingerprints("POST", path, sent, normaliseTopUp(sent as typeof body)).fingerprint;
  assert.deepEqual(
    stored(body),
    createHash("sha256")
      .update(`POST\n${path}\n${canonicalJson(body)}`)
      .digest(),
    "a body sent normalised has the fingerprint the previous release stored for it",
  );
  assert.deepEqual(stored({ ...body, client_reference: null }), stored(body));
  assert.deepEqual(stored({ ...body, first_name: " Ana\u00a0", email: " ana@example.com" }), stored(body));
  assert.notDeepEqual(stored({ ...body, client_reference: "b-1" }), stored(body));
  assert.notDeepEqual(stored({ ...body, first_name: "Anna" }), stored(body));
  const padded = { ...body, first_name: " Ana " };
  assert.deepEqual(
    requestFingerprints("POST", path, padded, normaliseTopUp(padded)).legacy_fingerprint,
    createHash("sha256")
      .update(`POST\n${path}\n${canonicalJson(padded)}`)
      .digest(),
    "the body as sent, as the previous release fingerprinted it",
  );
});

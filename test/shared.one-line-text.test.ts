// The one rule for names and operators' reasons (shared/schemas.ts): the schema (ajv counts code
// points) and checkOneLine, which the use cases run for the console's forms, agree: trimmed,
// counted in code points, one line, not blank.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiError } from "../src/shared/errors.ts";
import { checkOneLine, MAX_REASON_LENGTH } from "../src/shared/schemas.ts";

test("an emoji is one character: 500 of them are a reason, 501 are not", () => {
  const reason = "🧾".repeat(MAX_REASON_LENGTH);
  assert.equal(checkOneLine("reason", `  ${reason}\t`.replace("\t", " ")), reason);
  assert.throws(
    () => checkOneLine("reason", "🧾".repeat(MAX_REASON_LENGTH + 1)),
    (error: unknown) => error instanceof ApiError && error.code === "invalid_request",
  );
});

test("trimmed before counting; blank, multi-line or control characters are refused", () => {
  assert.equal(checkOneLine("name", `   ${"a".repeat(200)}   `, 200), "a".repeat(200));
  for (const value of ["", "   ", "two\nlines", "nul\u0000", "del\u007f"]) {
    assert.throws(
      () => checkOneLine("reason", value),
      (error: unknown) => error instanceof ApiError && error.errors?.[0]?.field === "reason",
      JSON.stringify(value),
    );
  }
});

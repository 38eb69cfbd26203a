// A refund's stored refusal as the console's error page (console/refund-refusal.ts), shared by the
// partner's refund form and the operator's refund on its behalf: its own code when it is one of
// ours, internal_error for anything else (an unknown code, an inherited key), never a crash.
import assert from "node:assert/strict";
import { test } from "node:test";
import { refusalOf } from "../src/console/refund-refusal.ts";

test("a refusal with one of our codes keeps its code and detail", () => {
  const error = refusalOf(409, JSON.stringify({ code: "refund_not_allowed", detail: "Installed." }));
  assert.equal(error.code, "refund_not_allowed");
  assert.equal(error.message, "Installed.");
});

test("a code that is not ours, or an inherited key, becomes internal_error with the status named", () => {
  for (const code of ["no_such_code", "toString", "__proto__", 42]) {
    const error = refusalOf(418, JSON.stringify({ code }));
    assert.equal(error.code, "internal_error", String(code));
    assert.equal(error.message, "The refund answered 418.");
  }
});

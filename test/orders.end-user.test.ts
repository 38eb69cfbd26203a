// The end-user checks of a submit (src/orders/end-user.ts): the phone check gives the same answer the
// first time and every time after, when it is answered from memory.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkEndUser } from "../src/orders/end-user.ts";
import { END_USER } from "./support/fixtures.ts";

test("a valid phone number passes, again and again", () => {
  for (let i = 0; i < 3; i++) assert.equal(checkEndUser(END_USER).phone, "+14155550123");
});

test("an E.164-shaped number that is no number anywhere is refused, again and again", () => {
  for (let i = 0; i < 3; i++) {
    assert.throws(() => checkEndUser({ ...END_USER, phone: "+10000000000" }), { code: "invalid_request" });
  }
});

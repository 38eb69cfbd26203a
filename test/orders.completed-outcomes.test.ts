// The in-process memory of completed submits (src/orders/completed-outcomes.ts): a retry gets the
// bytes already sent, only for the partner whose cart it is, and the memory stays bounded.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CompletedOutcomes } from "../src/orders/completed-outcomes.ts";
import { JSON_TYPE } from "../src/orders/stored-outcome.ts";

const outcome = (body: string) => ({ status: 200, content_type: JSON_TYPE, body });

test("a remembered completed submit is found for its partner only", () => {
  const completed = new CompletedOutcomes();
  completed.remember("ptr_a", "cart_1", outcome('{"orderID":"ord_1"}'));
  assert.deepEqual(completed.find("ptr_a", "cart_1"), outcome('{"orderID":"ord_1"}'));
  assert.equal(completed.find("ptr_b", "cart_1"), null);
  assert.equal(completed.find("ptr_a", "cart_2"), null);
});

test("only a 200 is remembered: a failed order's answer carries its request id", () => {
  const completed = new CompletedOutcomes();
  assert.throws(() => completed.remember("ptr_a", "cart_1", { ...outcome("{}"), status: 502 }));
  assert.equal(completed.find("ptr_a", "cart_1"), null);
});

test("the memory is bounded: the oldest entry is forgotten first", () => {
  const completed = new CompletedOutcomes(2);
  completed.remember("ptr_a", "cart_1", outcome("1"));
  completed.remember("ptr_a", "cart_2", outcome("2"));
  completed.remember("ptr_a", "cart_2", outcome("2"));
  completed.remember("ptr_a", "cart_3", outcome("3"));
  assert.equal(completed.find("ptr_a", "cart_1"), null);
  assert.deepEqual(completed.find("ptr_a", "cart_2"), outcome("2"));
  assert.deepEqual(completed.find("ptr_a", "cart_3"), outcome("3"));
});

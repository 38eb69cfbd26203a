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

test("a body's exact bytes find their cart's kept answer, for that partner only", () => {
  const completed = new CompletedOutcomes();
  const bytes = Buffer.from('{"cart_key":"cart_1","first_name":"Zoë"}');
  assert.throws(() => completed.rememberBytes("ptr_a", "cart_1", bytes), "no kept answer to link to");
  completed.remember("ptr_a", "cart_1", outcome("1"));
  completed.rememberBytes("ptr_a", "cart_1", bytes);
  assert.deepEqual(completed.findByBytes("ptr_a", Buffer.from(bytes)), outcome("1"));
  assert.equal(completed.findByBytes("ptr_b", bytes), null, "another partner's identical bytes");
  assert.equal(completed.findByBytes("ptr_a", Buffer.from(`${bytes} `)), null, "one byte more");
  // The bytes stand for themselves, not for the text they decode to.
  const latin1 = Buffer.from('{"cart_key":"cart_1","first_name":"Zoë"}', "latin1");
  assert.equal(completed.findByBytes("ptr_a", latin1), null);
});

test("a link outlives no answer, and the links are bounded too", () => {
  const completed = new CompletedOutcomes(2);
  const body = (n: number) => Buffer.from(`{"cart_key":"cart_${n}"}`);
  for (const n of [1, 2]) {
    completed.remember("ptr_a", `cart_${n}`, outcome(String(n)));
    completed.rememberBytes("ptr_a", `cart_${n}`, body(n));
  }
  completed.rememberBytes("ptr_a", "cart_2", Buffer.from('{ "cart_key": "cart_2" }'));
  // cart_1's link was the oldest of three: forgotten.
  assert.equal(completed.findByBytes("ptr_a", body(1)), null);
  assert.deepEqual(completed.findByBytes("ptr_a", body(2)), outcome("2"));
  // A third answer forgets cart_2's: its links find nothing, though they are still held.
  completed.remember("ptr_a", "cart_3", outcome("3"));
  completed.remember("ptr_a", "cart_4", outcome("4"));
  assert.equal(completed.findByBytes("ptr_a", body(2)), null);
});

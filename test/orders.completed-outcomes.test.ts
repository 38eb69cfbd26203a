// The in-process memory of completed submits (src/orders/completed-outcomes.ts): a retry gets the
// bytes already sent, only for the partner whose cart it is, and the memory stays bounded.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CompletedOutcomes, MAX_LINKED_BODY_BYTES } from "../src/orders/completed-outcomes.ts";
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
  completed.rememberBytes("ptr_a", "cart_1", bytes);
  assert.equal(completed.linked_bodies, 0, "no kept answer to link to");
  completed.remember("ptr_a", "cart_1", outcome("1"));
  completed.rememberBytes("ptr_b", "cart_1", bytes);
  assert.equal(completed.linked_bodies, 0, "not another partner's answer");
  completed.rememberBytes("ptr_a", "cart_1", bytes);
  assert.deepEqual(completed.findByBytes("ptr_a", Buffer.from(bytes)), outcome("1"));
  assert.equal(completed.findByBytes("ptr_b", bytes), null, "another partner's identical bytes");
  assert.equal(completed.findByBytes("ptr_a", Buffer.from(`${bytes} `)), null, "one byte more");
  // The bytes stand for themselves, not for the text they decode to.
  const latin1 = Buffer.from('{"cart_key":"cart_1","first_name":"Zoë"}', "latin1");
  assert.equal(completed.findByBytes("ptr_a", latin1), null);
});

test("one link per answer: a new body replaces the cart's last, and a forgotten answer takes its link", () => {
  const completed = new CompletedOutcomes(2);
  const body = (n: number, pad = "") => Buffer.from(`{"cart_key":"cart_${n}"${pad}}`);
  for (const n of [1, 2]) {
    completed.remember("ptr_a", `cart_${n}`, outcome(String(n)));
    completed.rememberBytes("ptr_a", `cart_${n}`, body(n));
  }
  // Padding makes endless distinct bodies for one cart: each replaces the last.
  for (let pad = 1; pad <= 50; pad++) completed.rememberBytes("ptr_a", "cart_2", body(2, " ".repeat(pad)));
  assert.equal(completed.linked_bodies, 2);
  assert.equal(completed.findByBytes("ptr_a", body(2)), null, "replaced");
  assert.deepEqual(completed.findByBytes("ptr_a", body(2, " ".repeat(50))), outcome("2"));
  assert.deepEqual(completed.findByBytes("ptr_a", body(1)), outcome("1"));
  // A third answer forgets the oldest, cart_1, and its link with it.
  completed.remember("ptr_a", "cart_3", outcome("3"));
  assert.equal(completed.findByBytes("ptr_a", body(1)), null);
  assert.equal(completed.linked_bodies, 1);
  // An answer kept again for its cart starts without a link.
  completed.remember("ptr_a", "cart_2", outcome("2"));
  assert.equal(completed.linked_bodies, 0);
});

test("a body longer than MAX_LINKED_BODY_BYTES is never linked", () => {
  const completed = new CompletedOutcomes();
  completed.remember("ptr_a", "cart_1", outcome("1"));
  const long = Buffer.from(`{"cart_key":"cart_1"${" ".repeat(MAX_LINKED_BODY_BYTES)}}`);
  completed.rememberBytes("ptr_a", "cart_1", long);
  assert.equal(completed.linked_bodies, 0);
  assert.equal(completed.findByBytes("ptr_a", long), null);
  const longest = Buffer.from(`{"cart_key":"cart_1"${" ".repeat(MAX_LINKED_BODY_BYTES - 21)}}`);
  assert.equal(longest.length, MAX_LINKED_BODY_BYTES);
  completed.rememberBytes("ptr_a", "cart_1", longest);
  assert.deepEqual(completed.findByBytes("ptr_a", longest), outcome("1"));
});

test("the cart key read from the raw bytes only picks the entry: the whole bytes decide", () => {
  const completed = new CompletedOutcomes();
  completed.remember("ptr_a", "cart_1", outcome("1"));
  const kept = Buffer.from('{"cart_key":"cart_1","email":"ana@example.com"}');
  completed.rememberBytes("ptr_a", "cart_1", kept);
  assert.deepEqual(completed.findByBytes("ptr_a", Buffer.from(kept)), outcome("1"));
  // The same cart named, other bytes: a miss, whatever else they say.
  for (const other of [
    '{"cart_key":"cart_1","email":"eve@example.com"}',
    '{"cart_key":"cart_1","email":"ana@example.com"} ',
    '{"cart_key":"cart_1"}',
  ]) {
    assert.equal(completed.findByBytes("ptr_a", Buffer.from(other)), null, other);
  }
  // Bytes the hint cannot read (spacing, an escape) are not kept, and are misses: such a client's
  // retries take the usual path, every time. The body kept before stays.
  for (const unreadable of ['{"cart_key" : "cart_1"}', '{"cart_key":"\\u0063art_1"}']) {
    completed.rememberBytes("ptr_a", "cart_1", Buffer.from(unreadable));
    assert.equal(completed.findByBytes("ptr_a", Buffer.from(unreadable)), null, unreadable);
  }
  assert.deepEqual(completed.findByBytes("ptr_a", kept), outcome("1"));
  for (const unreadable of ['{"email":"x"}', '{"cart_key":"cart_1']) {
    assert.equal(completed.findByBytes("ptr_a", Buffer.from(unreadable)), null, unreadable);
  }
});

test("the kept bytes are a copy: a request buffer reused afterwards changes nothing", () => {
  const completed = new CompletedOutcomes();
  completed.remember("ptr_a", "cart_1", outcome("1"));
  const request = Buffer.from('{"cart_key":"cart_1","first_name":"Ana"}');
  completed.rememberBytes("ptr_a", "cart_1", request);
  const same = Buffer.from(request);
  request.fill(0x20);
  assert.deepEqual(completed.findByBytes("ptr_a", same), outcome("1"));
});

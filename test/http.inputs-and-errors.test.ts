// Issue 36, the partner engineer's first hour: inputs taken as people type them (phones with
// spaces, dashes, dots and parentheses stored as E.164; internationalized email domains mailed to;
// invisible names refused), and refusals in words: one entry per bad field, with a stable code,
// never a pattern. A real service process, the carrier simulator and a real SMTP server.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import {
  ADMIN_TOKEN,
  type Answer,
  balance,
  call,
  createWorld,
  END_USER,
  newCart,
  newPartner,
  waitFor,
} from "./support/world.ts";

const world = await createWorld();
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);
const PHONE_MESSAGE = "must be an international number such as +14155550123";

async function storedOrder(order_id: string) {
  const rows = await sql<{ phone: string; email: string; first_name: string }>`
    select phone, email, first_name from orders where order_id = ${order_id}`.execute(db);
  return rows.rows[0]!;
}

async function ordersOfCart(cart_key: string): Promise<number> {
  const rows = await sql<{
    n: number;
  }>`select count(*)::int as n from orders where cart_key = ${cart_key}`.execute(db);
  return rows.rows[0]!.n;
}

/** A submit of a fresh cart with these end-user fields (the rest from END_USER). */
async function submitWith(
  key: string,
  overrides: Record<string, unknown>,
): Promise<Answer & { cart_key: string }> {
  const cart = await newCart(api, key);
  const answer = await call(api, "POST", "/v1/orders/submit", {
    key,
    body: { cart_key: cart.cart_key, ...END_USER, ...overrides },
  });
  return { ...answer, cart_key: cart.cart_key };
}

/** A 400 naming exactly these fields, charging and ordering nothing. */
async function assertRefused(
  answer: Answer & { cart_key: string },
  errors: Array<{ field: string; code: string; message?: RegExp | string }>,
  label: string,
) {
  assert.equal(answer.status, 400, `${label}: ${JSON.stringify(answer.body)}`);
  assert.equal(answer.body.code, "invalid_request");
  assert.deepEqual(
    answer.body.errors.map((error: { field: string; code: string }) => [error.field, error.code]),
    errors.map((error) => [error.field, error.code]),
    `${label}: ${JSON.stringify(answer.body.errors)}`,
  );
  errors.forEach((expected, i) => {
    const message: string = answer.body.errors[i].message;
    if (typeof expected.message === "string") assert.equal(message, expected.message, label);
    if (expected.message instanceof RegExp) assert.match(message, expected.message, label);
    assertWords(message, label);
  });
  assertWords(answer.body.detail, label);
  assert.equal(await ordersOfCart(answer.cart_key), 0, `${label}: no order`);
}

/** Words for people: no regular expression, no schema path, no ajv phrasing. */
function assertWords(text: string, label: string) {
  assert.doesNotMatch(
    text,
    /pattern|\\x|\^\(|\[\^|must match|must NOT|#\/|\/properties\//,
    `${label}: ${text}`,
  );
}

for (const typed of [
  "+1 415 555 0123",
  "+1-415-555-0123",
  "+1.415.555.0123",
  "+1 (415) 555-0123",
  "+14155550123",
]) {
  test(`a phone typed "${typed}" is accepted and stored as E.164 +14155550123`, async () => {
    const partner = await newPartner(api, 100_00);
    const answer = await submitWith(partner.api_key, { phone: typed });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal((await storedOrder(answer.body.orderID)).phone, "+14155550123");
  });
}

test("a phone with the 00 international prefix and a (0) trunk digit is stored as E.164", async () => {
  const partner = await newPartner(api, 100_00);
  const answer = await submitWith(partner.api_key, { phone: "0044 (0)20 7946 0958" });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal((await storedOrder(answer.body.orderID)).phone, "+442079460958");
});

test("a phone that is no international number is refused in words, one entry, nothing charged", async () => {
  const partner = await newPartner(api, 100_00);
  for (const typed of [
    "4155550123", // no country code
    "(415) 555-0123", // a national number
    "+1 800 FLOWERS", // letters
    "+1 415 555 0123 ext 7", // an extension
    "+1555", // too short
    "+10000000000", // the shape of a number, but none anywhere
    "call me",
  ]) {
    const answer = await submitWith(partner.api_key, { phone: typed });
    await assertRefused(answer, [{ field: "phone", code: "invalid_format", message: PHONE_MESSAGE }], typed);
    assert.equal(answer.body.detail, `phone ${PHONE_MESSAGE}.`);
  }
  assert.equal(await balance(api, partner.api_key), 100_00);
});

test("an email with an internationalized domain is stored as sent and mailed to its ASCII form", async () => {
  const partner = await newPartner(api, 100_00);
  const answer = await submitWith(partner.api_key, { email: "ana@bücher.example" });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal((await storedOrder(answer.body.orderID)).email, "ana@bücher.example");
  const iccid: string = answer.body.purchases[0].iccid;
  const message = await waitFor("the confirmation email", async () =>
    world.smtp.messages.find((m) => m.raw.includes(iccid)),
  );
  // Sent in ASCII (no SMTPUTF8 needed); smtp-server hands the envelope over decoded back to Unicode.
  assert.match(message.raw, /^To: ana@xn--bcher-kva\.example\r$/m);
  assert.deepEqual(message.envelope.rcpt_to, ["ana@bücher.example"]);
});

test("an email with an internationalized mailbox name is refused at input, saying why", async () => {
  const partner = await newPartner(api, 100_00);
  for (const email of ["josé@example.com", "用户@例子.example"]) {
    const answer = await submitWith(partner.api_key, { email });
    await assertRefused(
      answer,
      [{ field: "email", code: "not_allowed", message: /ASCII mailbox name before the @/ }],
      email,
    );
  }
});

test("malformed emails are refused in words", async () => {
  const partner = await newPartner(api, 100_00);
  for (const email of [
    "not-an-email",
    "ana@",
    "ana@localhost",
    "ana..lima@example.com",
    "ana@exa_mple.com",
    "ana@-x.com",
    "a b@example.com",
  ]) {
    const answer = await submitWith(partner.api_key, { email });
    await assertRefused(
      answer,
      [
        {
          field: "email",
          code: "invalid_format",
          message: "must be an email address such as ann@example.com",
        },
      ],
      email,
    );
  }
});

test("a name made only of invisible characters is refused; names in any script are taken", async () => {
  const partner = await newPartner(api, 100_00);
  for (const invisible of [
    "\u3164",
    "\u200b\u200d",
    "\u0301\u0302",
    " \u00a0\u2003 ",
    "\u2800",
    "\ufe0f",
    "\u115f\u1160",
  ]) {
    const answer = await submitWith(partner.api_key, { first_name: invisible });
    await assertRefused(
      answer,
      [{ field: "first_name", code: "invalid_format", message: /visible letter/ }],
      JSON.stringify(invisible),
    );
  }
  const taken = await submitWith(partner.api_key, {
    first_name: "  José\u0301 李 ",
    last_name: "Ørsted-Nguyễn",
  });
  assert.equal(taken.status, 200, JSON.stringify(taken.body));
  assert.equal((await storedOrder(taken.body.orderID)).first_name, "José\u0301 李");
});

test("several bad fields: one entry each, in words, with a stable code", async () => {
  const partner = await newPartner(api, 100_00);
  const cart = await newCart(api, partner.api_key);
  const answer = await call(api, "POST", "/v1/orders/submit", {
    key: partner.api_key,
    body: {
      cart_key: cart.cart_key,
      phone: "415-555",
      first_name: 42,
      last_name: "x".repeat(101),
      client_reference: 7,
      colour: "blue",
    },
  });
  await assertRefused(
    { ...answer, cart_key: cart.cart_key },
    [
      { field: "email", code: "required", message: "is required" },
      { field: "phone", code: "invalid_format", message: PHONE_MESSAGE },
      { field: "first_name", code: "invalid_type", message: "must be text" },
      { field: "last_name", code: "too_long", message: "must be at most 100 characters" },
      { field: "client_reference", code: "invalid_type", message: "must be text or null" },
      { field: "colour", code: "unknown_field", message: "is not a known field" },
    ].sort((a, b) => order(answer, a.field) - order(answer, b.field)),
    "six bad fields",
  );
  assert.match(answer.body.detail, /; and 3 more \(see errors\)\.$/);
});

/** Where a field stands in the answer (the entries' order follows the schema's, not this test's). */
function order(answer: Answer, field: string): number {
  return answer.body.errors.findIndex((error: { field: string }) => error.field === field);
}

test("an empty name says it must not be empty; a blank one says what it must be", async () => {
  const partner = await newPartner(api, 100_00);
  await assertRefused(
    await submitWith(partner.api_key, { first_name: "" }),
    [{ field: "first_name", code: "too_short", message: "must not be empty" }],
    "empty",
  );
  await assertRefused(
    await submitWith(partner.api_key, { last_name: "a\u0000b" }),
    [{ field: "last_name", code: "invalid_format", message: /visible letter, on one line/ }],
    "NUL",
  );
});

test("a resend to an internationalized mailbox name is refused; to an internationalized domain it is sent", async () => {
  const partner = await newPartner(api, 100_00);
  const bought = await submitWith(partner.api_key, {});
  assert.equal(bought.status, 200);
  const path = `/v1/orders/${bought.body.orderID}/resend-email`;
  const refused = await call(api, "POST", path, { key: partner.api_key, body: { email: "zoë@example.com" } });
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.deepEqual(
    refused.body.errors.map((error: { field: string; code: string }) => [error.field, error.code]),
    [["email", "not_allowed"]],
  );
  const sent = await call(api, "POST", path, { key: partner.api_key, body: { email: "zoe@bücher.example" } });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  await waitFor("the resent email", async () =>
    world.smtp.messages.some((m) => /^To: zoe@xn--bcher-kva\.example\r$/m.test(m.raw)),
  );
});

test("query parameters and path ids are refused in words too", async () => {
  const partner = await newPartner(api, 0);
  const page = await call(api, "GET", "/v1/profile/orders?limit=500", { key: partner.api_key });
  assert.equal(page.status, 400, JSON.stringify(page.body));
  assert.deepEqual(page.body.errors, [
    { field: "limit", code: "invalid_format", message: "must be a whole number from 1 to 100" },
  ]);
  assert.equal(page.body.detail, "limit must be a whole number from 1 to 100.");
  const credit = await call(api, "POST", "/admin/partners/nope/wallet/credits", {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { amount_minor: 0, reference: "wire 1" },
  });
  assert.equal(credit.status, 400, JSON.stringify(credit.body));
  for (const error of credit.body.errors) assertWords(error.message, JSON.stringify(error));
  assert.deepEqual(
    credit.body.errors.map((error: { field: string; code: string }) => [error.field, error.code]),
    [["partner_id", "invalid_format"]],
    "the path is judged first, alone",
  );
  assert.equal(credit.body.errors[0].message, "must be an id starting ptr_");
});

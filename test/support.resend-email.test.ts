// Support work end to end (contract "Support and finance work"): resending an order's confirmation
// email, its email log and its timeline, through a real service process, the carrier simulator, a
// real SMTP server and one PostgreSQL. Asserts on what the SMTP server received and on the rows.
import assert from "node:assert/strict";
import { test } from "node:test";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { topUpBody } from "./support/fixtures.ts";
import {
  type Answer,
  buyEsim,
  call,
  createWorld,
  END_USER,
  type Json,
  newCart,
  submit,
  waitFor,
} from "./support/world.ts";

const world = await createWorld({ services: 1 });
const api = world.services[0]!.url;
const pool = world.database.pool;

function resend(
  key: string,
  order_id: string,
  body: Json = {},
  headers: Record<string, string> = {},
): Promise<Answer> {
  return call(api, "POST", `/v1/orders/${encodeURIComponent(order_id)}/resend-email`, { key, body, headers });
}

async function emails(key: string, order_id: string): Promise<Json[]> {
  const answer = await call(api, "GET", `/v1/orders/${encodeURIComponent(order_id)}/emails`, { key });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data as Json[];
}

/** The log entry once `done` holds for it (the sweep runs every 250 ms). */
function entryWhen(
  key: string,
  order_id: string,
  email_id: string,
  done: (entry: Json) => boolean,
): Promise<Json> {
  return waitFor(`email ${email_id} of ${order_id}`, async () => {
    const entry = (await emails(key, order_id)).find((e) => e.email_id === email_id);
    return entry && done(entry) ? entry : null;
  });
}

function receivedWithKey(message_key: string) {
  return world.smtp.messages.filter((message) => message.raw.includes(`Message-ID: <${message_key}@`));
}

test("a resend to another address reaches the SMTP server with that recipient, and the log says sent", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  await entryWhen(partner.api_key, order_id, `confirmation.${order_id}`, (e) => e.status === "sent");
  const answer = await resend(partner.api_key, order_id, { email: "Desk@Agency.example" });
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  const email_id = answer.body.email_id as string;
  assert.match(email_id, /^eml_[A-Za-z0-9_-]{22}$/);
  const entry = await entryWhen(partner.api_key, order_id, email_id, (e) => e.status === "sent");
  assert.deepEqual(Object.keys(entry).sort(), ["email_id", "kind", "last_error", "sent_at", "status", "to"]);
  assert.equal(entry.kind, "resend");
  assert.equal(entry.to, "Desk@agency.example", "the domain as relays write it");
  assert.equal(entry.last_error, null);
  assert.ok(Date.parse(entry.sent_at) > 0);
  const received = receivedWithKey(`resend.${email_id}`);
  assert.equal(received.length, 1);
  assert.deepEqual(received[0]!.envelope.rcpt_to, ["Desk@agency.example"]);
  assert.match(received[0]!.raw, /LPA:1\$/, "the resend carries the install details");

  const log = await emails(partner.api_key, order_id);
  assert.deepEqual(
    log.map((e) => [e.kind, e.status]),
    [
      ["confirmation", "sent"],
      ["resend", "sent"],
    ],
  );
  assert.equal(log[0]!.to, END_USER.email);
  const audit = await pool.query(
    "select details from audit_log where action = 'order.email_resent' and target_id = $1",
    [order_id],
  );
  assert.equal(audit.rows.length, 1);
  assert.equal(audit.rows[0].details.email_id, email_id);
  assert.equal(audit.rows[0].details.to, "Desk@agency.example");
});

test("without an email the resend goes to the order's address, with its own Message-ID", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  // No body at all, as `{"email"?}` allows.
  const answer = await call(api, "POST", `/v1/orders/${order_id}/resend-email`, { key: partner.api_key });
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  const entry = await entryWhen(partner.api_key, order_id, answer.body.email_id, (e) => e.status === "sent");
  assert.equal(entry.to, END_USER.email);
  const received = receivedWithKey(`resend.${answer.body.email_id}`);
  assert.equal(received.length, 1);
  assert.deepEqual(received[0]!.envelope.rcpt_to, [END_USER.email]);
});

test("a relay that refuses the resend leaves it failed with the server's answer, then the retry sends it", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  await entryWhen(partner.api_key, order_id, `confirmation.${order_id}`, (e) => e.status === "sent");
  world.smtp.failNext(1);
  const answer = await resend(partner.api_key, order_id, { email: "retry@agency.example" });
  assert.equal(answer.status, 202);
  const failed = await entryWhen(
    partner.api_key,
    order_id,
    answer.body.email_id,
    (e) => e.status !== "queued",
  );
  assert.equal(failed.status, "failed", JSON.stringify(failed));
  assert.match(failed.last_error, /451/);
  assert.equal(failed.sent_at, null);
  // Retried after exp(1) seconds, as the first confirmation is.
  const sent = await entryWhen(partner.api_key, order_id, answer.body.email_id, (e) => e.status === "sent");
  assert.equal(sent.last_error, null);
  assert.equal(receivedWithKey(`resend.${answer.body.email_id}`).length, 1);
});

test("a top-up order has no email: 409 no_email_for_order, nothing queued", async () => {
  const { partner, iccid } = await buyEsim(api, 100_00);
  const topup = await call(api, "POST", "/v1/orders/submit-topup", {
    key: partner.api_key,
    body: topUpBody(iccid, { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" }),
  });
  assert.equal(topup.status, 200, JSON.stringify(topup.body));
  const answer = await resend(partner.api_key, topup.body.orderID);
  assert.equal(answer.status, 409);
  assert.equal(answer.body.code, "no_email_for_order");
  assert.deepEqual(await emails(partner.api_key, topup.body.orderID), []);
  const rows = await pool.query("select 1 from email_resends where order_id = $1", [topup.body.orderID]);
  assert.equal(rows.rowCount, 0);
});

test("a failed or refunded order has nothing to install: 409 no_email_for_order", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  const cart = await newCart(api, partner.api_key, "fr-1gb-7d");
  const declined = await submit(api, partner.api_key, cart.cart_key, { email: "decline@carrier.test" });
  assert.equal(declined.status, 502, JSON.stringify(declined.body));
  // The declined order's row is written after the answer (a deferred write): wait for it.
  const failed_id = await waitFor("the declined order", async () => {
    const rows = await pool.query("select order_id from orders where cart_key = $1 and status = 'failed'", [
      cart.cart_key,
    ]);
    return (rows.rows[0]?.order_id as string | undefined) ?? null;
  });
  assert.equal((await resend(partner.api_key, failed_id)).body.code, "no_email_for_order");

  const refunded = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  const answer = await resend(partner.api_key, order_id);
  assert.equal(answer.status, 409);
  assert.equal(answer.body.code, "no_email_for_order");
});

test("another partner's order, or none: 404 order_not_found on every support route", async () => {
  const mine = await buyEsim(api, 100_00);
  const theirs = await buyEsim(api, 100_00);
  for (const order_id of [theirs.order_id, "ord_doesnotexist0000000000"]) {
    assert.equal((await resend(mine.partner.api_key, order_id)).body.code, "order_not_found");
    for (const path of ["emails", "events"]) {
      const answer = await call(api, "GET", `/v1/orders/${order_id}/${path}`, { key: mine.partner.api_key });
      assert.equal(answer.status, 404);
      assert.equal(answer.body.code, "order_not_found");
    }
  }
  const rows = await pool.query("select 1 from email_resends where order_id = $1", [theirs.order_id]);
  assert.equal(rows.rowCount, 0);
});

test("a malformed address or an unknown field is 400 invalid_request, nothing queued", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  for (const body of [
    { email: "not-an-address" },
    { email: "" },
    { email: `${"a".repeat(250)}@x.example` },
    { to: "a@b.example" },
  ]) {
    const answer = await resend(partner.api_key, order_id, body);
    assert.equal(answer.status, 400, JSON.stringify(body));
    assert.equal(answer.body.code, "invalid_request");
  }
  const rows = await pool.query("select 1 from email_resends where order_id = $1", [order_id]);
  assert.equal(rows.rowCount, 0);
});

test("10 resends of one order at once: exactly 5 queued (202), 5 refused with 429 resend_limit_reached", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      resend(partner.api_key, order_id, { email: `desk${i}@agency.example` }),
    ),
  );
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, [202, 202, 202, 202, 202, 429, 429, 429, 429, 429]);
  for (const refused of answers.filter((a) => a.status === 429)) {
    assert.equal(refused.body.code, "resend_limit_reached");
    const retry_after = Number(refused.headers.get("retry-after"));
    assert.ok(retry_after > 23 * 3600 && retry_after <= 24 * 3600, `Retry-After ${retry_after}`);
  }
  const rows = await pool.query("select recipient from email_resends where order_id = $1", [order_id]);
  assert.equal(rows.rowCount, 5);
  const accepted = answers.filter((a) => a.status === 202).map((a) => a.body.email_id as string);
  for (const email_id of accepted) {
    await entryWhen(partner.api_key, order_id, email_id, (e) => e.status === "sent");
    assert.equal(receivedWithKey(`resend.${email_id}`).length, 1);
  }
  // A resend older than 24 hours leaves the window: one more is allowed.
  await pool.query("update email_resends set created_at = now() - interval '25 hours' where email_id = $1", [
    accepted[0],
  ]);
  assert.equal((await resend(partner.api_key, order_id)).status, 202);
  assert.equal((await resend(partner.api_key, order_id)).status, 429);
});

test("a retried resend with the same Idempotency-Key emails once; the key with another address is 422", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  const headers = { "idempotency-key": "resend-ticket-4711" };
  const first = await resend(partner.api_key, order_id, { email: "once@agency.example" }, headers);
  assert.equal(first.status, 202);
  const again = await Promise.all(
    [1, 2, 3].map(() => resend(partner.api_key, order_id, { email: "once@agency.example" }, headers)),
  );
  for (const answer of again) {
    assert.equal(answer.status, 202);
    assert.equal(answer.body.email_id, first.body.email_id);
    assert.equal(answer.headers.get("idempotent-replayed"), "true");
  }
  const other_address = await resend(partner.api_key, order_id, { email: "else@agency.example" }, headers);
  assert.equal(other_address.status, 422);
  assert.equal(other_address.body.code, "idempotency_key_reused");
  const other = await buyEsim(api, 100_00);
  await entryWhen(partner.api_key, order_id, first.body.email_id, (e) => e.status === "sent");
  assert.equal(receivedWithKey(`resend.${first.body.email_id}`).length, 1);
  assert.equal((await pool.query("select 1 from email_resends where order_id = $1", [order_id])).rowCount, 1);
  const audits = await pool.query(
    "select 1 from audit_log where action = 'order.email_resent' and target_id = $1",
    [order_id],
  );
  assert.equal(audits.rowCount, 1);
  assert.equal(
    (await resend(other.partner.api_key, other.order_id, {}, headers)).status,
    202,
    "keys are per partner",
  );
});

test("the timeline lists the order's events and its eSIM's, oldest first", async () => {
  const { partner, order_id, iccid } = await buyEsim(api, 100_00);
  const other = await buyEsim(api, 100_00);
  const refunded = await call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key });
  assert.equal(refunded.status, 200, JSON.stringify(refunded.body));
  const timeline = await waitFor("the order's two events", async () => {
    const answer = await call(api, "GET", `/v1/orders/${order_id}/events`, { key: partner.api_key });
    assert.equal(answer.status, 200);
    return answer.body.data.length >= 2 ? (answer.body.data as Json[]) : null;
  });
  assert.deepEqual(
    timeline.map((event) => event.type),
    ["order.completed", "order.refunded"],
  );
  for (const event of timeline) assert.equal(event.data.orderID, order_id);
  assert.ok(timeline.every((event, i) => i === 0 || event.created_at >= timeline[i - 1]!.created_at));
  // An eSIM event of this order's eSIM joins it; another partner's order is not seen.
  await pool.query(
    `insert into events (event_id, partner_id, type, data) values ('evt_timelinetest0000000001', $1, 'esim.installed', $2)`,
    [partner.partner_id, JSON.stringify({ iccid })],
  );
  const after = await call(api, "GET", `/v1/orders/${order_id}/events`, { key: partner.api_key });
  assert.deepEqual(
    after.body.data.map((event: Json) => event.type),
    ["order.completed", "order.refunded", "esim.installed"],
  );
  const theirs = await call(api, "GET", `/v1/orders/${other.order_id}/events`, {
    key: other.partner.api_key,
  });
  assert.ok(theirs.body.data.every((event: Json) => event.data.orderID === other.order_id));
});

test("resends and a refund of one order at once: no 500, each resend queued before the refund or refused after it", async () => {
  const { partner, order_id } = await buyEsim(api, 100_00);
  const [refund, ...resends] = await Promise.all([
    call(api, "POST", `/v1/orders/${order_id}/refund`, { key: partner.api_key }),
    ...[0, 1, 2, 3].map((i) => resend(partner.api_key, order_id, { email: `race${i}@agency.example` })),
  ]);
  assert.equal(refund.status, 200, JSON.stringify(refund.body));
  for (const answer of resends) {
    assert.ok(
      answer.status === 202 || answer.body.code === "no_email_for_order",
      JSON.stringify(answer.body),
    );
  }
  const queued = resends.filter((a) => a.status === 202).map((a) => a.body.email_id as string);
  // Each queued one is sent (queued before the refund committed) or given up, final, once the sweep
  // reads the refunded order: never left queued.
  for (const email_id of queued) {
    const entry = await entryWhen(partner.api_key, order_id, email_id, (e) => e.status !== "queued");
    if (entry.status === "failed") assert.match(entry.last_error, /refunded/);
  }
  assert.equal((await resend(partner.api_key, order_id)).body.code, "no_email_for_order");
});

test("a partner's resends to other addresses are capped per rolling 24 hours, exactly under concurrency; its orders' own addresses are not", async () => {
  // A second process with a cap of 3 (RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY), on the same database.
  const capped = (await world.startService({ RESENDS_TO_OTHER_ADDRESSES_PER_PARTNER_PER_DAY: "3" })).url;
  const { partner, order_id } = await buyEsim(api, 100_00);
  const second = await submit(
    api,
    partner.api_key,
    (await newCart(api, partner.api_key, "fr-1gb-7d")).cart_key,
  );
  assert.equal(second.status, 200, JSON.stringify(second.body));
  const orders = [order_id, second.body.orderID as string];
  const resendVia = (id: string, body: Json) =>
    call(capped, "POST", `/v1/orders/${id}/resend-email`, { key: partner.api_key, body });
  // Four per order (under the order's limit of 5), eight in all, at once.
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => resendVia(orders[i % 2]!, { email: `relay${i}@elsewhere.example` })),
  );
  assert.deepEqual(answers.map((a) => a.status).sort(), [202, 202, 202, 429, 429, 429, 429, 429]);
  for (const refused of answers.filter((a) => a.status === 429)) {
    assert.equal(refused.body.code, "resend_limit_reached");
    assert.match(refused.body.detail, /addresses other than their orders'.*at most 3/);
    const retry_after = Number(refused.headers.get("retry-after"));
    assert.ok(retry_after > 23 * 3600 && retry_after <= 24 * 3600, `Retry-After ${retry_after}`);
  }
  const { rows } = await pool.query(
    "select count(*)::int as n from email_resends where partner_id = $1 and to_other_address",
    [partner.partner_id],
  );
  assert.equal(rows[0].n, 3);
  // The order's own address, whatever its case, is not counted and still goes out.
  const own = await resendVia(order_id, { email: END_USER.email.toUpperCase() });
  assert.equal(own.status, 202, JSON.stringify(own.body));
  assert.equal((await resendVia(orders[1]!, {})).status, 202);
  // Another partner has its own cap.
  const other = await buyEsim(api, 100_00);
  const theirs = await call(capped, "POST", `/v1/orders/${other.order_id}/resend-email`, {
    key: other.partner.api_key,
    body: { email: "desk@elsewhere.example" },
  });
  assert.equal(theirs.status, 202);
});

test("the books and the SMTP audit hold after resends (resend Message-IDs included)", async () => {
  await waitFor("every email sent or given up", async () => {
    const left = await pool.query(
      "select (select count(*) from email_outbox) + (select count(*) from email_resends where sent_at is null and last_error is null) as n",
    );
    return Number(left.rows[0].n) === 0;
  });
  const audit = await auditSystem({ pool, simulator: world.simulator, smtp: world.smtp });
  assert.deepEqual(audit.breaches, [], formatAudit(audit));
});

// The carrier's refusal text is the carrier's words, for the operator (issue 10): partners get a
// fixed, documented detail, while the raw text goes to the order row and to the operator's logs.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { sql } from "kysely";
import { pino } from "pino";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { loggerOptions } from "../src/server/app.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

/** What the simulator says when it declines (src/simulators/carrier/README.md). */
const CARRIER_TEXT = "declined by carrier (sandbox magic value)";

const output: string[] = [];
const logger = pino(
  loggerOptions("info") as object,
  new Writable({
    write(chunk, _encoding, done) {
      output.push(chunk.toString("utf8"));
      done();
    },
  }),
);
const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const app = await createTestApp({ log_level: "info" }, { loggerInstance: logger, database, carrier });
const partner = await app.createPartner("Acme Travel", 10_000);

async function submitDeclined(cart_key: string) {
  return app.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: app.auth(partner.api_key),
    payload: {
      cart_key,
      email: "decline@carrier.test",
      phone: "+14155550123",
      first_name: "A",
      last_name: "L",
    },
  });
}

test("the carrier's refusal text is not shown to partners verbatim: a fixed detail, the text kept for the operator", async () => {
  const cart = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(partner.api_key),
    payload: { package_id: "fr-1gb-7d" },
  });
  const { cart_key } = cart.json();
  const first = await submitDeclined(cart_key);
  const retry = await submitDeclined(cart_key);
  const row = await sql<{ order_id: string; carrier_refusal: string | null }>`
    select order_id, carrier_refusal from orders where cart_key = ${cart_key}`.execute(app.db);
  const order = row.rows[0]!;

  for (const answer of [first, retry]) {
    assert.equal(answer.statusCode, 502, answer.body);
    assert.equal(answer.json().code, "carrier_error");
    assert.equal(answer.json().detail, `The carrier declined order ${order.order_id}. Nothing was charged.`);
    assert.ok(!answer.body.includes("sandbox magic value"), "the carrier's own words stay inside");
  }
  assert.equal(order.carrier_refusal, CARRIER_TEXT, "the order row keeps what the carrier said");
  const logged = output
    .join("")
    .split("\n")
    .filter((line) => line.includes(order.order_id) && line.includes(CARRIER_TEXT));
  assert.ok(logged.length >= 1, "the operator's log names the order and the carrier's words");
});

// Dates are UTC whatever the database server's time zone (issue 10). The database of this file
// gets a default zone far from UTC, so that "today" there is not today in UTC right now: west of
// UTC (Pago Pago, UTC-11) before 10:00 UTC, east of it (Kiritimati, UTC+14) from 10:00 UTC on.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { createTestApp } from "./support/app.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const WEST_OF_UTC = new Date().getUTCHours() < 10;
const ZONE = WEST_OF_UTC ? "Pacific/Pago_Pago" : "Pacific/Kiritimati";

const database = await createTestDatabase({ catalog: true });
// Before any pooled connection exists: every session of this database starts in ZONE by default.
const admin = new pg.Client({ connectionString: database.url });
await admin.connect();
await admin.query(`alter database ${new URL(database.url).pathname.slice(1)} set timezone = '${ZONE}'`);
await admin.end();

const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const carrier = new HttpCarrier({ base_url: simulator.url, api_key: simulator.apiKey, timeout_ms: 5_000 });
const app = await createTestApp({}, { database, carrier });
const partner = await app.createPartner("Acme Travel", 100_000);

function utcDay(offset: number): string {
  const date = new Date();
  date.setUTCDate(date.getUTCDate() + offset);
  return date.toISOString().slice(0, 10);
}

async function cartStarting(start_date: string): Promise<string> {
  const created = await app.app.inject({
    method: "POST",
    url: "/v1/orders/cart",
    headers: app.auth(partner.api_key),
    payload: { package_id: "fr-1gb-7d", start_date: utcDay(0) },
  });
  assert.equal(created.statusCode, 201, created.body);
  const { cart_key } = created.json();
  // A cart made for a start date that has since become the past (made before midnight UTC).
  await sql`update carts set start_date = ${start_date}::date where cart_key = ${cart_key}`.execute(app.db);
  return cart_key;
}

function submit(cart_key: string) {
  return app.app.inject({
    method: "POST",
    url: "/v1/orders/submit",
    headers: app.auth(partner.api_key),
    payload: {
      cart_key,
      email: "ana@example.com",
      phone: "+14155550123",
      first_name: "Ana",
      last_name: "Lima",
    },
  });
}

test(`every connection of the service speaks UTC, though the database's default zone is ${ZONE}`, async () => {
  const zone = await sql<{ zone: string }>`select current_setting('TimeZone') as zone`.execute(app.db);
  assert.equal(zone.rows[0]!.zone, "UTC");
});

test(`a cart whose start date passed in UTC is refused, and one starting today (UTC) is sold, in ${ZONE}`, async () => {
  const passed = await submit(await cartStarting(utcDay(-1)));
  assert.equal(passed.statusCode, 422, passed.body);
  assert.equal(passed.json().code, "invalid_start_date");

  const today = await submit(await cartStarting(utcDay(0)));
  assert.equal(today.statusCode, 200, today.body);
  assert.equal(today.json().purchases[0].start_date, utcDay(0));
  const orders = await sql<{ n: number }>`
    select count(*)::int as n from orders where partner_id = ${partner.partner_id}`.execute(app.db);
  assert.equal(orders.rows[0]!.n, 1, "only the cart starting today became an order");
});

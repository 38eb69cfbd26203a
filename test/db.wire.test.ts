// The values and rows pool.ts maps itself (src/db/wire.ts), for the statements it holds and sends
// ahead, against pg's own: a deferred write stores what the same write sent at once stores, and a
// kept answer reads as pg's answer to the same statement. pg's mapping is read from its private
// module here only, to hold ours to it: a pg release that changes it fails this test.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, test } from "node:test";
import { createPool, inTransaction, sendAhead } from "../src/db/pool.ts";
import { toWireValue } from "../src/db/wire.ts";
import { createTestDatabase } from "./support/db.ts";

const require = createRequire(import.meta.url);
const { prepareValue } = require("pg/lib/utils.js") as { prepareValue(value: unknown): unknown };

const database = await createTestDatabase();

const VALUES: [string, unknown][] = [
  ["text", 'ana\'s "quoted" \\ text'],
  ["number", 12.5],
  ["negative integer", -42],
  ["bigint", 9007199254740993n],
  ["boolean", true],
  ["null", null],
  ["undefined", undefined],
  ["date", new Date("2026-01-02T03:04:05.678Z")],
  ["date before year 1", new Date("-000041-03-15T12:00:00.000Z")],
  ["buffer", Buffer.from([0, 1, 254, 255])],
  ["typed array", new Uint8Array([7, 8, 9])],
  ["text array", ["a", "b,c", 'd"e', "f\\g", null, ""]],
  [
    "nested array",
    [
      [1, 2],
      [3, null],
    ],
  ],
  ["array of dates", [new Date("2026-11-27T08:00:00.000Z")]],
  ["array of buffers", [Buffer.from("hi")]],
  ["array of objects", [{ a: 1 }, { b: [2] }]],
  ["object", { order_id: "ord_1", amounts: [1, 2], nested: { ok: true } }],
  ["toPostgres", { toPostgres: () => "(1,2)" }],
  ["toPostgres returning an array", { toPostgres: () => ["x", "y"] }],
];

for (const [kind, value] of VALUES) {
  test(`a ${kind} goes out as pg sends it`, () => {
    assert.deepEqual(toWireValue(value), prepareValue(value));
  });
}

test("a Date goes out at the process's own offset, as pg sends it, whatever the zone", () => {
  const zone = process.env.TZ;
  after(() => {
    process.env.TZ = zone;
  });
  // Node reads TZ again when it changes: half-hour offsets on both sides of UTC.
  for (const tz of ["Asia/Kolkata", "America/St_Johns", "UTC"]) {
    process.env.TZ = tz;
    for (const date of [new Date("2026-01-02T23:59:59.999Z"), new Date("2026-07-01T00:00:00.000Z")]) {
      assert.deepEqual(toWireValue(date), prepareValue(date), `${tz} ${date.toISOString()}`);
    }
  }
});

test("an invalid Date fails its own call instead of going out as text PostgreSQL rejects", () => {
  assert.throws(() => toWireValue(new Date(Number.NaN)), /invalid Date/);
});

test("a kept answer's rows read as pg's own answer's, in every column type we read", async () => {
  const pool = createPool(database.url, 1, "esim-wire", { prepare_threshold: 1 });
  after(() => pool.end());
  const text = `select $1::int8 as big, $2::date as day, $3::timestamptz as at, $4::jsonb as doc,
                       $5::text[] as tags, $6::bool as yes, $7::numeric as amount, $8::bytea as bytes,
                       null::text as nothing, g as n
                from generate_series(1, 2) g`;
  const values = [
    "42",
    "2026-11-27",
    new Date("2026-01-02T03:04:05.678Z"),
    { a: [1, 2] },
    ["a", "b,c"],
    true,
    "12.50",
    Buffer.from([1, 2]),
  ];
  const plain = await pool.query(text, values);
  const kept = await inTransaction(pool, async (client) => {
    // Run once at once, to prepare it on this connection; then held, carried by the select.
    await client.query(text, values);
    const ahead = await sendAhead(() => client.query(text, values));
    await client.query("select 1", []);
    return ahead.rows();
  });
  assert.deepEqual(kept, plain.rows);
  assert.equal(plain.rows[0].big, 42, "the pool's own bigint parser");
});

// The simulator's lifecycle steps against a real PostgreSQL (src/carrier/simulator/lifecycle.ts):
// time ending bundles and starting the next, and the snapshot a signal carries, each read in one
// statement (expire-and-select, profile-with-bundles).
import assert from "node:assert/strict";
import { test } from "node:test";
import { advance, snapshot } from "../src/carrier/simulator/lifecycle.ts";
import { ensureSimulatorSchema } from "../src/carrier/simulator/schema.ts";
import { inTransaction } from "../src/db/pool.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase();
await ensureSimulatorSchema(database.pool);
const DAY_MS = 86_400_000;

async function profileWith(
  iccid: string,
  bundles: Array<{ status: string; started_days_ago?: number; validity_days: number; cancelled?: boolean }>,
) {
  await database.pool.query(
    `insert into carrier_sim.profiles (reference, iccid, matching_id, smdp_address, external_package_id,
       data_mb_total, validity_days, end_user_email, installed_at)
     values ($1, $2, $1, 'smdp.example', 'ext', 1024, 7, 'ana@example.com', now() - interval '30 days')`,
    [`ref-${iccid}`, iccid],
  );
  for (const [n, bundle] of bundles.entries()) {
    const started =
      bundle.started_days_ago === undefined ? null : new Date(Date.now() - bundle.started_days_ago * DAY_MS);
    await database.pool.query(
      `insert into carrier_sim.bundles (reference, iccid, data_mb, validity_days, status, activated_at, expires_at, cancelled_at)
       values ($1, $2, 1024, $3, $4, $5::timestamptz, $5::timestamptz + make_interval(days => $3), $6)`,
      [
        `ref-${iccid}-${n}`,
        iccid,
        bundle.validity_days,
        bundle.status,
        started,
        bundle.cancelled ? new Date() : null,
      ],
    );
  }
}

test("time ends a lapsed bundle and starts the next at its end, down a chain; a cancelled one is left out", async () => {
  const iccid = "8900000000000000011";
  // Ran out 3 days ago (7-day bundle started 10 days ago); the next, 2 days, ended a day ago; the last runs on.
  await profileWith(iccid, [
    { status: "active", started_days_ago: 10, validity_days: 7 },
    { status: "queued", cancelled: true, validity_days: 30 },
    { status: "queued", validity_days: 2 },
    { status: "queued", validity_days: 30 },
  ]);
  const now = new Date();
  await inTransaction(database.pool, (client) =>
    advance(client, { iccid, installed_at: new Date(now.getTime() - 30 * DAY_MS), deleted_at: null }, now),
  );
  const signal = await snapshot(database.pool, iccid, now);
  assert.ok(signal);
  assert.equal(signal.profile.state, "installed");
  assert.deepEqual(
    signal.bundles.map((b) => [b.reference, b.status]),
    [
      [`ref-${iccid}-0`, "expired"],
      [`ref-${iccid}-2`, "expired"],
      [`ref-${iccid}-3`, "active"],
    ],
  );
  const [first, second, third] = signal.bundles;
  assert.equal(second!.activated_at, first!.expires_at, "the next bundle started when the one before ended");
  assert.equal(third!.activated_at, second!.expires_at);
  assert.equal(
    new Date(third!.expires_at!).getTime() - new Date(third!.activated_at!).getTime(),
    30 * DAY_MS,
  );
});

test("the snapshot of a profile without bundles, and of no profile", async () => {
  const iccid = "8900000000000000029";
  await profileWith(iccid, []);
  const signal = await snapshot(database.pool, iccid, new Date());
  assert.deepEqual(signal?.bundles, []);
  assert.equal(signal?.profile.state, "installed");
  assert.equal(await snapshot(database.pool, "8900000000000000037", new Date()), null);
});

// The simulator's lifecycle steps against a real PostgreSQL (src/simulators/carrier/lifecycle.ts):
// time ending bundles and starting the next, and the snapshot a signal carries, each read in one
// statement (expire-and-select, profile-with-bundles).
import assert from "node:assert/strict";
import { test } from "node:test";
import { inTransaction } from "../src/db/pool.ts";
import type { SimulatorContext } from "../src/simulators/carrier/answers.ts";
import { initialFaults } from "../src/simulators/carrier/faults.ts";
import { advance, snapshot } from "../src/simulators/carrier/lifecycle.ts";
import { ensureSimulatorSchema } from "../src/simulators/carrier/schema.ts";
import { topUp } from "../src/simulators/carrier/top-up.ts";
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
      // Bought with the profile, 30 days ago: a queued bundle may start any time since.
      `insert into carrier_sim.bundles (reference, iccid, data_mb, validity_days, status, activated_at, expires_at,
                                        cancelled_at, created_at)
       values ($1, $2, 1024, $3, $4, $5::timestamptz, $5::timestamptz + make_interval(days => $3), $6,
               now() - interval '30 days')`,
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

test("a top-up in one call: queued behind a running bundle, started at once after ended ones, refused on a cancelled profile, answered again by reference", async () => {
  const signalled: string[] = [];
  const faults = initialFaults(0, 0);
  const context: SimulatorContext = {
    pool: database.pool,
    faults: () => faults,
    sleep: async () => undefined,
    signal: (iccid) => signalled.push(iccid),
  };
  const request = (reference: string, iccid: string) => ({
    reference,
    iccid,
    external_package_id: "ext",
    data_mb: 512,
    validity_days: 3,
    end_user_email: "ana@example.com",
  });
  const running = "8900000000000000045";
  const ended = "8900000000000000052";
  const cancelled = "8900000000000000060";
  const lapsed = "8900000000000000086";
  await profileWith(running, [{ status: "active", started_days_ago: 1, validity_days: 7 }]);
  // Ended by time 3 days ago, marked or not yet: a top-up bought now starts now, not back then.
  await profileWith(lapsed, [
    { status: "expired", started_days_ago: 10, validity_days: 7 },
    { status: "active", started_days_ago: 10, validity_days: 7 },
  ]);
  await profileWith(ended, [{ status: "depleted", started_days_ago: 1, validity_days: 7 }]);
  await profileWith(cancelled, []);
  await database.pool.query("update carrier_sim.profiles set cancelled_at = now() where iccid = $1", [
    cancelled,
  ]);

  const queued = await topUp(context, request("top-running", running));
  assert.deepEqual(queued, { status: 200, body: { iccid: running, data_mb_total: 1536 } });
  const started = await topUp(context, request("top-ended", ended));
  assert.deepEqual(started, { status: 200, body: { iccid: ended, data_mb_total: 1536 } });
  const statuses = async (iccid: string) =>
    (await snapshot(database.pool, iccid, new Date()))!.bundles.map((b) => [b.reference, b.status]);
  assert.deepEqual(await statuses(running), [
    [`ref-${running}-0`, "active"],
    ["top-running", "queued"],
  ]);
  assert.deepEqual(await statuses(ended), [
    [`ref-${ended}-0`, "depleted"],
    ["top-ended", "active"],
  ]);
  const bought = Date.now();
  assert.equal((await topUp(context, request("top-lapsed", lapsed))).status, 200);
  const after_lapse = (await snapshot(database.pool, lapsed, new Date()))!.bundles;
  assert.deepEqual(
    after_lapse.map((b) => [b.reference, b.status]),
    [
      [`ref-${lapsed}-0`, "expired"],
      [`ref-${lapsed}-1`, "expired"],
      ["top-lapsed", "active"],
    ],
  );
  const lapsed_start = new Date(after_lapse[2]!.activated_at!).getTime();
  assert.ok(lapsed_start >= bought - 1_000, "the top-up started when it was bought, not at the old expiry");

  const refused = await topUp(context, request("top-cancelled", cancelled));
  assert.equal(refused.status, 422);
  assert.match(JSON.stringify(refused.body), /was cancelled/);
  const unknown = await topUp(context, request("top-unknown", "8900000000000000078"));
  assert.match(JSON.stringify(unknown.body), /unknown iccid/);

  // Asked again, each reference gets its recorded answer and nothing is added twice.
  assert.deepEqual(await topUp(context, request("top-running", running)), queued);
  assert.deepEqual(await topUp(context, request("top-cancelled", cancelled)), refused);
  const totals = await database.pool.query<{ iccid: string; data_mb_total: string }>(
    "select iccid, data_mb_total::text from carrier_sim.profiles where iccid = any($1) order by iccid",
    [[running, ended, cancelled]],
  );
  assert.deepEqual(
    totals.rows.map((row) => row.data_mb_total),
    ["1536", "1536", "1024"],
  );
  const refusals = await database.pool.query(
    "select reference, kind, reason from carrier_sim.refusals where reference like 'top-%' order by reference",
  );
  assert.deepEqual(refusals.rows, [
    { reference: "top-cancelled", kind: "topup", reason: `profile ${cancelled} was cancelled` },
    { reference: "top-unknown", kind: "topup", reason: "unknown iccid 8900000000000000078" },
  ]);
  const recorded = await database.pool.query("select reference from carrier_sim.topups order by reference");
  assert.deepEqual(
    recorded.rows.map((row) => row.reference),
    ["top-ended", "top-lapsed", "top-running"],
  );
  assert.deepEqual(signalled, [running, ended, lapsed, running]);
});

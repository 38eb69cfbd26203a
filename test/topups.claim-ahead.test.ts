// The Idempotency-Key's claim sent ahead (src/topups/idempotency.ts claimKeyAhead): its insert
// goes out with the transaction's next statement, and the claim it answers is claimKey's: new for
// a new key, the existing row (locked) for a known one, new again for an expired one, and nothing
// left behind by a transaction that rolls back. A key naming its order is checked at COMMIT.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { sql } from "kysely";
import { newId } from "../src/shared/ids.ts";
import { claimKeyAhead, type NewKey } from "../src/topups/idempotency.ts";
import { countedKysely, createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase();
const { db, roundTrips } = countedKysely(database.url, "esim-claim-ahead");
const partner_id = newId("partner");
await sql`insert into partners (partner_id, name) values (${partner_id}, 'Claims')`.execute(db);

function newKey(idempotency_key = randomUUID()): NewKey {
  return {
    partner_id,
    idempotency_key,
    fingerprint: Buffer.alloc(32, 7),
    request_id: randomUUID(),
    ttl_hours: 24,
    order_id: null,
  };
}

/** Claims the key with a select carrying the insert; the claim, and the round trips it took. */
async function claimWithRead(key: NewKey, abort = false) {
  const start = roundTrips();
  const claim = await db
    .transaction()
    .execute(async (trx) => {
      const claiming = await claimKeyAhead(trx, key);
      await sql`select 1`.execute(trx);
      const claimed = await claiming.claim();
      if (abort) throw new Error("rolled back");
      return claimed;
    })
    .catch((error: Error) => error);
  return { claim, round_trips: roundTrips() - start };
}

const keyRows = async (idempotency_key: string) =>
  (
    await sql<{ state: string }>`
      select state from idempotency_keys where partner_id = ${partner_id} and idempotency_key = ${idempotency_key}`.execute(
      db,
    )
  ).rows;

test("a new key is claimed with the next statement; a known one answers its row; a rolled-back claim leaves nothing", async () => {
  for (let i = 0; i < 3; i++) await claimWithRead(newKey()); // prepares the texts on the connection
  const key = newKey();
  const first = await claimWithRead(key);
  assert.deepEqual(first.claim, { kind: "new" });
  assert.equal(first.round_trips, 2, "BEGIN, the insert and the select together; then COMMIT");
  assert.deepEqual(await keyRows(key.idempotency_key), [{ state: "running" }]);

  // A known key: its row, locked by this transaction (another cannot take it meanwhile).
  const locked = await db.transaction().execute(async (trx) => {
    const claiming = await claimKeyAhead(trx, key);
    await sql`select 1`.execute(trx);
    const claimed = await claiming.claim();
    const other = await database.pool
      .query("select 1 from idempotency_keys where idempotency_key = $1 for update nowait", [
        key.idempotency_key,
      ])
      .catch((error: { code?: string }) => error.code);
    return { claimed, other };
  });
  assert.ok(locked.claimed.kind === "existing", JSON.stringify(locked.claimed));
  assert.equal(locked.claimed.row.state, "running");
  assert.ok(locked.claimed.row.fingerprint.equals(key.fingerprint));
  assert.equal(locked.other, "55P03", "the existing row is locked until the claim's transaction ends");

  // Rolled back while the insert was still held: never sent, nothing kept.
  const dropped = newKey();
  const start = roundTrips();
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await claimKeyAhead(trx, dropped);
      throw new Error("rolled back");
    }),
    /rolled back/,
  );
  assert.equal(
    roundTrips() - start,
    2,
    "the select (with BEGIN) and the ROLLBACK: the insert never went out",
  );
  assert.deepEqual(await keyRows(dropped.idempotency_key), []);
});

test("a known key purged between the insert and its lock is inserted again: new", async () => {
  const key = newKey();
  await claimWithRead(key);
  const claim = await db.transaction().execute(async (trx) => {
    const claiming = await claimKeyAhead(trx, key);
    await sql`select 1`.execute(trx); // the insert went out and found the row
    // The purge, from another connection, before the claim reads the row to lock it.
    await database.pool.query("delete from idempotency_keys where idempotency_key = $1", [
      key.idempotency_key,
    ]);
    return claiming.claim();
  });
  assert.deepEqual(claim, { kind: "new" });
  assert.deepEqual(await keyRows(key.idempotency_key), [{ state: "running" }]);
});

test("an expired key is claimed as new again, in place", async () => {
  const key = newKey();
  await claimWithRead(key);
  await sql`
    update idempotency_keys set state = 'completed', response_status = 200, response_body = '{}',
           expires_at = now() - interval '1 second'
    where partner_id = ${partner_id} and idempotency_key = ${key.idempotency_key}`.execute(db);
  const restarted = await claimWithRead({ ...key, request_id: randomUUID() });
  assert.deepEqual(restarted.claim, { kind: "new" });
  assert.deepEqual(await keyRows(key.idempotency_key), [{ state: "running" }]);
});

test("a key names the order its transaction inserts next; one naming no order fails at COMMIT", async () => {
  await sql`
    insert into packages (package_id, external_package_id, name, data_mb, validity_days, wholesale_minor,
                          retail_minor, currency, coverage)
    values ('claims-fr-1gb', 'X', 'France 1 GB', 1024, 7, 100, 200, 'EUR', 'country')`.execute(db);
  // The top-up's order (submit-topup.ts): inserted after the key, in the same transaction.
  const order_id = newId("order");
  const linked = { ...newKey(), order_id };
  const claimed = await db.transaction().execute(async (trx) => {
    const claiming = await claimKeyAhead(trx, linked);
    await sql`
      insert into orders (order_id, partner_id, type, status, package_id, external_package_id, data_mb,
                          validity_days, total_minor, currency, email, phone, first_name, last_name, iccid,
                          topup_iccid)
      values (${order_id}, ${partner_id}, 'topup', 'pending', 'claims-fr-1gb', 'X', 1024, 7, 100, 'EUR',
              'a@example.com', '+33612345678', 'A', 'B', '8933000000000000001', '8933000000000000001')`.execute(
      trx,
    );
    return claiming.claim();
  });
  assert.deepEqual(claimed, { kind: "new" });
  const rows = await sql<{ order_id: string | null }>`
    select order_id from idempotency_keys where idempotency_key = ${linked.idempotency_key}`.execute(db);
  assert.deepEqual(rows.rows, [{ order_id }]);

  // An order that never comes: the foreign key, deferred to COMMIT (migration 0016), refuses it.
  const orphan = { ...newKey(), order_id: newId("order") };
  await assert.rejects(
    db.transaction().execute(async (trx) => {
      const claiming = await claimKeyAhead(trx, orphan);
      await sql`select 1`.execute(trx);
      return claiming.claim();
    }),
    (error: { code?: string }) => error.code === "23503",
  );
  assert.deepEqual(await keyRows(orphan.idempotency_key), []);
});

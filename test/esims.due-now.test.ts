// A top-up's completion makes its eSIM due for a pull (src/esims/sync-esims.sql.ts dueNow), inside
// the completion's transaction. On a real PostgreSQL, with no sync running: an eSIM already due is
// not written (no row lock held for the rest of that transaction, which concurrent top-ups of the
// eSIM would queue behind); one due later, or not pulled at all (null), is due now.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { dueNow } from "../src/esims/sync-esims.sql.ts";
import { createTestDatabase } from "./support/db.ts";

const { pool } = await createTestDatabase({ catalog: true });
const db = createKysely<Database>(pool);

async function esimDueIn(interval: string | null): Promise<string> {
  const suffix = randomBytes(6).toString("hex");
  const partner_id = `ptr_${suffix}`;
  const order_id = `ord_${suffix}`;
  const iccid = `8944${String(Number.parseInt(suffix, 16)).padStart(15, "0").slice(-15)}`;
  await pool.query("insert into partners (partner_id, name) values ($1, 'Due Now Travel')", [partner_id]);
  await pool.query(
    `insert into carts (cart_key, partner_id, package_id, external_package_id, validity_days, total_minor, currency,
                        expires_at)
     select $1, $2, package_id, external_package_id, validity_days, wholesale_minor, currency, now() + interval '1 hour'
     from packages where package_id = 'fr-1gb-7d'`,
    [`cart_${suffix}`, partner_id],
  );
  await pool.query(
    `insert into orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, validity_days,
                         total_minor, currency, email, phone, first_name, last_name, iccid, resolved_at)
     select $1, $2, 'esim', 'completed', $4, package_id, external_package_id, validity_days, wholesale_minor, currency,
            'ana@example.com', '+14155550123', 'Ana', 'Lima', $3, now()
     from packages where package_id = 'fr-1gb-7d'`,
    [order_id, partner_id, iccid, `cart_${suffix}`],
  );
  await pool.query(
    `insert into esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code, next_sync_at)
     values ($1, $2, $3, 'fr-1gb-7d', 'smdp.example', 'MATCH', now() + $4::interval)`,
    [iccid, partner_id, order_id, interval],
  );
  return iccid;
}

async function row(iccid: string): Promise<{ version: string; next_sync_at: Date | null }> {
  const { rows } = await pool.query<{ version: string; next_sync_at: Date | null }>(
    "select xmin::text as version, next_sync_at from esims where iccid = $1",
    [iccid],
  );
  return rows[0]!;
}

const inTransaction = (iccid: string) => db.transaction().execute((trx) => dueNow(trx, iccid));

test("an eSIM already due is left as it is: no new row version, its time unchanged", async () => {
  const iccid = await esimDueIn("-1 hour");
  const before = await row(iccid);
  await inTransaction(iccid);
  assert.deepEqual(await row(iccid), before);
});

test("an eSIM due later, or not pulled at all, is due now", async () => {
  for (const interval of ["1 day", null]) {
    const iccid = await esimDueIn(interval);
    await inTransaction(iccid);
    const after = await row(iccid);
    assert.ok(
      after.next_sync_at !== null && after.next_sync_at.getTime() <= Date.now() + 1_000,
      `${interval}`,
    );
  }
});

// The `purge_audit_log` job as the worker runs it (src/audit/purge-audit-log.ts): a real service
// process with AUDIT_RETENTION_DAYS=365, an entry backdated past it and one within it; the job
// (queued here as graphile-worker's hourly crontab would) deletes the first and keeps the second.
// The batches and limits are audit.log.test.ts's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { createWorld, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld({ env: { AUDIT_RETENTION_DAYS: "365" } });
const api = world.services[0]!.url;
const db = createKysely<Database>(world.database.pool);

async function actionsOf(partner_id: string): Promise<string[]> {
  const result = await sql<{ action: string }>`
    select action from audit_log where partner_id = ${partner_id} order by audit_seq`.execute(db);
  return result.rows.map((row) => row.action);
}

test("the worker's purge_audit_log deletes entries older than AUDIT_RETENTION_DAYS and keeps the rest", async () => {
  const partner = await newPartner(api, 10_00);
  assert.deepEqual(await actionsOf(partner.partner_id), ["partner.created", "wallet.credited"]);
  await sql`update audit_log set created_at = now() - interval '366 days'
            where partner_id = ${partner.partner_id} and action = 'partner.created'`.execute(db);
  await sql`update audit_log set created_at = now() - interval '364 days'
            where partner_id = ${partner.partner_id} and action = 'wallet.credited'`.execute(db);
  await sql`select graphile_worker.add_job('purge_audit_log', '{}'::json)`.execute(db);
  await waitFor("the purge job", async () => (await actionsOf(partner.partner_id)).length === 1);
  assert.deepEqual(await actionsOf(partner.partner_id), ["wallet.credited"]);
});

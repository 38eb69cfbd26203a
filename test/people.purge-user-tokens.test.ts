// Sign-in links (user_tokens) are purged a day after they expire (src/people/purge-user-tokens.ts):
// a link that may still be used, or that expired less than a day ago (a late click reads "expired"),
// stays; older ones go, in bounded batches.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { test } from "node:test";
import { sql } from "kysely";
import { purgeUserTokens } from "../src/people/purge-user-tokens.ts";
import { taskList } from "../src/server/worker.ts";
import { createTestApp } from "./support/app.ts";
import { addPerson } from "./support/people.ts";

const app = await createTestApp();
const partner = await app.createPartner("Links Travel");
const person = await addPerson(app.database.pool, {
  realm: "partner",
  role: "owner",
  partner_id: partner.partner_id,
});

async function link(expires: string, used = false): Promise<Buffer> {
  const token_hash = createHash("sha256").update(randomBytes(32)).digest();
  await sql`
    insert into user_tokens (token_hash, user_id, kind, created_at, expires_at, used_at)
    values (${token_hash}, ${person.user_id}, 'password_reset', now() - interval '30 days',
            now() + ${expires}::interval, ${used ? sql`now() - interval '29 days'` : null})`.execute(app.db);
  return token_hash;
}

async function kept(token_hash: Buffer): Promise<boolean> {
  const found = await sql`select 1 from user_tokens where token_hash = ${token_hash}`.execute(app.db);
  return found.rows.length === 1;
}

test("links expired more than a day ago are purged; live and recently expired links stay", async () => {
  const live = await link("1 hour");
  const just_expired = await link("-2 hours");
  const old = await link("-2 days");
  const old_used = await link("-20 days", true);
  assert.ok((await purgeUserTokens(app.db)) >= 2);
  assert.deepEqual(
    [await kept(live), await kept(just_expired), await kept(old), await kept(old_used)],
    [true, true, false, false],
  );
  assert.equal(await purgeUserTokens(app.db), 0, "a second run finds nothing");
});

test("a backlog larger than a batch is purged in one run, and the worker runs the task", async () => {
  await sql`
    insert into user_tokens (token_hash, user_id, kind, created_at, expires_at)
    select sha256(('backlog-' || n)::bytea), ${person.user_id}, 'invitation', now() - interval '40 days',
           now() - interval '39 days'
    from generate_series(1, 2500) n`.execute(app.db);
  const task = taskList({ ctx: app.ctx, log: app.app.log as never }).purge_user_tokens;
  assert.ok(task, "the worker knows the task");
  const logged: string[] = [];
  await task({}, { logger: { info: (m: string) => logged.push(m) } } as never);
  const left = await sql<{ n: number }>`
    select count(*)::int as n from user_tokens where expires_at < now() - interval '1 day'`.execute(app.db);
  assert.equal(left.rows[0]?.n, 0);
  assert.match(logged.join("\n"), /purged 2500 sign-in links/);
});

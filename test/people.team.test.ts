// A team's people changed (issue 31) over real HTTP and PostgreSQL: disabling a person or changing
// their role ends their sessions at once; a partner always keeps an active owner, also when two
// owners are demoted at the same moment; each change is audited once with the person as actor.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { changeRole } from "../src/people/manage-team.ts";
import { createTestApp } from "./support/app.ts";
import { addPerson, type Person, signInCookie } from "./support/people.ts";

const t = await createTestApp();
const base = await t.app.listen({ port: 0, host: "127.0.0.1" });

type Session = { cookie: string; csrf: string };

async function session(person: Person): Promise<Session> {
  const cookie = `console_partner=${await signInCookie(base, person)}`;
  const page = await (await fetch(`${base}/console/team`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf, "a CSRF token on the Team page");
  return { cookie, csrf };
}

function post(s: Session, path: string, fields: Record<string, string>) {
  return fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base, cookie: s.cookie },
    body: new URLSearchParams({ _csrf: s.csrf, ...fields }).toString(),
  });
}

async function audits(action: string, target_id: string) {
  const { rows } = await sql<{ actor_type: string; actor_id: string; details: Record<string, unknown> }>`
    select actor_type, actor_id, details from audit_log where action = ${action} and target_id = ${target_id}`.execute(
    t.db,
  );
  return rows;
}

async function team() {
  const partner = await t.createPartner("Team Change Travel");
  const owner = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  return { partner, owner };
}

test("disabling a person ends their live session at once: their next page goes to sign-in, and they cannot sign in again", async () => {
  const { partner, owner } = await team();
  const dev = await addPerson(t.database.pool, {
    realm: "partner",
    role: "developer",
    partner_id: partner.partner_id,
  });
  const devSession = await session(dev);
  assert.equal((await fetch(`${base}/console/keys`, { headers: { cookie: devSession.cookie } })).status, 200);
  const ownerSession = await session(owner);
  const done = await post(ownerSession, `/console/team/${dev.user_id}/status`, { status: "disabled" });
  assert.equal(done.status, 303);
  const next = await fetch(`${base}/console/keys`, {
    redirect: "manual",
    headers: { cookie: devSession.cookie },
  });
  assert.equal(next.status, 303);
  assert.equal(next.headers.get("location"), "/console/sign-in?ended=1");
  const again = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base },
    body: new URLSearchParams({ email: dev.email, password: dev.password }).toString(),
  });
  assert.equal(again.status, 401, "a disabled person cannot sign in");
  const entries = await audits("user.disabled", dev.user_id);
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.actor_type, "user");
  assert.equal(entries[0]!.actor_id, owner.user_id);

  const enabled = await post(ownerSession, `/console/team/${dev.user_id}/status`, { status: "active" });
  assert.equal(enabled.status, 303);
  assert.ok(await signInCookie(base, dev));
  assert.equal((await audits("user.enabled", dev.user_id)).length, 1);
});

test("changing a person's role ends their sessions; the audit says from and to", async () => {
  const { partner, owner } = await team();
  const support = await addPerson(t.database.pool, {
    realm: "partner",
    role: "support",
    partner_id: partner.partner_id,
  });
  const supportSession = await session(support);
  const changed = await post(await session(owner), `/console/team/${support.user_id}/role`, {
    role: "finance",
  });
  assert.equal(changed.status, 303);
  const next = await fetch(`${base}/console/orders`, {
    redirect: "manual",
    headers: { cookie: supportSession.cookie },
  });
  assert.equal(next.status, 303, "signed out at once");
  const entries = await audits("user.role_changed", support.user_id);
  assert.equal(entries.length, 1);
  assert.deepEqual(entries[0]!.details, { from: "support", to: "finance" });
  // Signed in again, the new role's pages open.
  const fresh = `console_partner=${await signInCookie(base, support)}`;
  assert.equal(
    (await fetch(`${base}/console/wallet/statement.csv`, { headers: { cookie: fresh } })).status,
    200,
  );
});

test("the last active owner cannot be demoted or disabled (409, nothing changed); with a second owner one can", async () => {
  const { partner, owner } = await team();
  const ownerSession = await session(owner);
  const demote = await post(ownerSession, `/console/team/${owner.user_id}/role`, { role: "admin" });
  assert.equal(demote.status, 409);
  assert.match(await demote.text(), /at least one active owner/);
  const row = await sql<{
    role: string;
    status: string;
  }>`select role, status from users where user_id = ${owner.user_id}`.execute(t.db);
  assert.deepEqual(row.rows[0], { role: "owner", status: "active" });
  assert.equal((await audits("user.role_changed", owner.user_id)).length, 0);

  const second = await addPerson(t.database.pool, {
    realm: "partner",
    role: "owner",
    partner_id: partner.partner_id,
  });
  const disable = await post(ownerSession, `/console/team/${second.user_id}/status`, { status: "disabled" });
  assert.equal(disable.status, 303);
  // `second` is disabled: `owner` is the only active owner again.
  const disableSelf = await post(await session(owner), `/console/team/${owner.user_id}/role`, {
    role: "viewer",
  });
  assert.equal(disableSelf.status, 409);
});

test("an admin cannot change or disable an owner, nor make anyone an owner (403, nothing changed)", async () => {
  const { partner, owner } = await team();
  const admin = await addPerson(t.database.pool, {
    realm: "partner",
    role: "admin",
    partner_id: partner.partner_id,
  });
  const viewer = await addPerson(t.database.pool, {
    realm: "partner",
    role: "viewer",
    partner_id: partner.partner_id,
  });
  const s = await session(admin);
  assert.equal((await post(s, `/console/team/${owner.user_id}/status`, { status: "disabled" })).status, 403);
  assert.equal((await post(s, `/console/team/${owner.user_id}/role`, { role: "viewer" })).status, 403);
  assert.equal((await post(s, `/console/team/${viewer.user_id}/role`, { role: "owner" })).status, 403);
  assert.equal((await post(s, `/console/team/${viewer.user_id}/role`, { role: "support" })).status, 303);
  const rows = await sql<{ user_id: string; role: string; status: string }>`
    select user_id, role, status from users where partner_id = ${partner.partner_id} order by user_id`.execute(
    t.db,
  );
  const byId = new Map(rows.rows.map((r) => [r.user_id, r]));
  assert.deepEqual(byId.get(owner.user_id), { user_id: owner.user_id, role: "owner", status: "active" });
  assert.equal(byId.get(viewer.user_id)!.role, "support");
  // Another partner's person is no one here.
  const other = await t.createPartner("Other Travel");
  const stranger = await addPerson(t.database.pool, {
    realm: "partner",
    role: "viewer",
    partner_id: other.partner_id,
  });
  assert.equal((await post(s, `/console/team/${stranger.user_id}/role`, { role: "support" })).status, 404);
});

test("two owners demoted at the same moment: one demotion succeeds and the other is refused, an owner remains", async () => {
  for (let round = 0; round < 5; round++) {
    const { partner, owner } = await team();
    const second = await addPerson(t.database.pool, {
      realm: "partner",
      role: "owner",
      partner_id: partner.partner_id,
    });
    const change = (user_id: string) =>
      changeRole(t.db, {
        realm: "partner",
        partner_id: partner.partner_id,
        user_id,
        role: "admin",
        actor: { type: "user", id: user_id, ip: "127.0.0.1" },
        may_change_owners: true,
      });
    const results = await Promise.allSettled([change(owner.user_id), change(second.user_id)]);
    const refused = results.filter((r) => r.status === "rejected");
    assert.equal(refused.length, 1, JSON.stringify(results.map((r) => r.status)));
    assert.equal((refused[0] as PromiseRejectedResult).reason.code, "last_owner");
    const owners = await sql<{ n: number }>`
      select count(*)::int as n from users
      where partner_id = ${partner.partner_id} and role = 'owner' and status = 'active'`.execute(t.db);
    assert.equal(owners.rows[0]!.n, 1);
  }
});

test("the owner requires a second factor of the team (audited); an admin may not", async () => {
  const { partner, owner } = await team();
  const admin = await addPerson(t.database.pool, {
    realm: "partner",
    role: "admin",
    partner_id: partner.partner_id,
  });
  const adminSession = await session(admin);
  assert.equal((await post(adminSession, "/console/team/two-factor", { required: "true" })).status, 403);
  const done = await post(await session(owner), "/console/team/two-factor", { required: "true" });
  assert.equal(done.status, 303);
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from audit_log where action = 'team.two_factor_required' and partner_id = ${partner.partner_id}`.execute(
    t.db,
  );
  assert.equal(rows[0]!.n, 1);
});

test("the operator keeps an active admin: the last one cannot be demoted or disabled, also when two demote each other at once", async () => {
  // Other tests of this file may add operator admins: this one counts its own and those already there.
  const { rows } = await sql<{ user_id: string }>`
    select user_id from users where realm = 'operator' and role = 'admin' and status = 'active'`.execute(
    t.db,
  );
  const first = await addPerson(t.database.pool, { realm: "operator", role: "admin" });
  const second = await addPerson(t.database.pool, { realm: "operator", role: "admin" });
  // Leave only these two: earlier admins demoted directly (the rule under test then bites on ours).
  for (const row of rows)
    await sql`update users set role = 'viewer' where user_id = ${row.user_id}`.execute(t.db);
  const demote = (user_id: string) =>
    changeRole(t.db, {
      realm: "operator",
      partner_id: null,
      user_id,
      role: "viewer",
      actor: { type: "user", id: user_id, ip: "127.0.0.1" },
      may_change_owners: true,
    });
  const results = await Promise.allSettled([demote(first.user_id), demote(second.user_id)]);
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  assert.equal(refused.length, 1, JSON.stringify(results.map((r) => r.status)));
  assert.equal(refused[0]!.reason.code, "last_owner");
  const left = await sql<{ n: number }>`
    select count(*)::int as n from users where realm = 'operator' and role = 'admin' and status = 'active'`.execute(
    t.db,
  );
  assert.equal(left.rows[0]!.n, 1, "one admin remains");
});

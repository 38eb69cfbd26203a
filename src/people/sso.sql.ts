// SQL of single sign-on (migrations 0023 and 0026): a partner's OpenID provider, the email domains
// it vouches for, and the sign-ins with SSO under way.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type SsoConnectionRow = {
  partner_id: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: Buffer;
  created_at: Date;
  updated_at: Date;
  /** Sorted. */
  domains: string[];
};

export async function selectConnection(db: Executor, partner_id: string): Promise<SsoConnectionRow | null> {
  const result = await sql<SsoConnectionRow>`
    select c.partner_id, c.issuer, c.client_id, c.client_secret_sealed, c.created_at, c.updated_at,
           array(select d.domain from sso_domains d where d.partner_id = c.partner_id order by d.domain)
             as domains
    from sso_connections c where c.partner_id = ${partner_id}`.execute(db);
  return result.rows[0] ?? null;
}

/** The partner whose provider vouches for this (lower-case) domain, or null. */
export async function selectDomainPartner(db: Executor, domain: string): Promise<string | null> {
  const result = await sql<{ partner_id: string }>`
    select partner_id from sso_domains where domain = ${domain}`.execute(db);
  return result.rows[0]?.partner_id ?? null;
}

export async function upsertConnection(
  db: Executor,
  row: { partner_id: string; issuer: string; client_id: string; client_secret_sealed: Buffer },
): Promise<void> {
  await sql`
    insert into sso_connections (partner_id, issuer, client_id, client_secret_sealed)
    values (${row.partner_id}, ${row.issuer}, ${row.client_id}, ${row.client_secret_sealed})
    on conflict (partner_id) do update
      set issuer = excluded.issuer, client_id = excluded.client_id,
          client_secret_sealed = excluded.client_secret_sealed, updated_at = now()`.execute(db);
}

/**
 * The partner's domains become exactly `domains`; returns those another partner holds (not taken).
 * Run in the transaction that wrote the connection: the caller rolls back when any is returned.
 */
export async function replaceDomains(db: Executor, partner_id: string, domains: string[]): Promise<string[]> {
  await sql`delete from sso_domains where partner_id = ${partner_id}`.execute(db);
  const taken = await sql<{ domain: string }>`
    insert into sso_domains (domain, partner_id)
    select unnest(${domains}::text[]), ${partner_id}
    on conflict (domain) do nothing
    returning domain`.execute(db);
  const inserted = new Set(taken.rows.map((row) => row.domain));
  return domains.filter((domain) => !inserted.has(domain));
}

/** Removes the partner's provider and its domains (cascade); false when it had none. */
export async function deleteConnection(db: Executor, partner_id: string): Promise<boolean> {
  const result = await sql`delete from sso_connections where partner_id = ${partner_id}`.execute(db);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

export type SsoAttemptRow = {
  partner_id: string;
  code_verifier: string;
  state: string;
  nonce: string;
  redirect_uri: string;
};

export async function insertAttempt(
  db: Executor,
  row: SsoAttemptRow & { attempt_hash: Buffer; ip: string; lifetime_minutes: number },
): Promise<void> {
  await sql`
    insert into sso_attempts (attempt_hash, partner_id, code_verifier, state, nonce, redirect_uri, ip, expires_at)
    values (${row.attempt_hash}, ${row.partner_id}, ${row.code_verifier}, ${row.state}, ${row.nonce},
            ${row.redirect_uri}, ${row.ip.slice(0, 64)}, now() + make_interval(mins => ${row.lifetime_minutes}))`.execute(
    db,
  );
}

/** Attempts started from `ip` and still live. */
export async function countLiveAttempts(db: Executor, ip: string): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from sso_attempts where ip = ${ip.slice(0, 64)} and expires_at > now()`.execute(
    db,
  );
  return result.rows[0]?.n ?? 0;
}

/** Takes an attempt (it is gone after this, whatever follows); null when unknown or expired. */
export async function takeAttempt(db: Executor, attempt_hash: Buffer): Promise<SsoAttemptRow | null> {
  const result = await sql<SsoAttemptRow & { live: boolean }>`
    delete from sso_attempts where attempt_hash = ${attempt_hash}
    returning partner_id, code_verifier, state, nonce, redirect_uri, expires_at > now() as live`.execute(db);
  const row = result.rows[0];
  return row?.live ? row : null;
}

/** Removes up to `limit` expired attempts (run at each start: no timer needed). */
export async function deleteExpiredAttempts(db: Executor, limit: number): Promise<void> {
  await sql`
    delete from sso_attempts where attempt_hash in (
      select attempt_hash from sso_attempts where expires_at <= now() limit ${limit})`.execute(db);
}

/**
 * The email domains of the team's active people who chose a password here, i.e. who proved they
 * read mail at that address (an invitation or a reset link reached them): the domains an owner may
 * vouch for, with their subdomains.
 */
export async function selectProvenTeamDomains(db: Executor, partner_id: string): Promise<string[]> {
  const result = await sql<{ domain: string }>`
    select distinct lower(split_part(email, '@', 2)) as domain from users
    where partner_id = ${partner_id} and status = 'active' and password_hash is not null`.execute(db);
  return result.rows.map((r) => r.domain);
}

// SQL of the partners domain: partners and their API keys.
import { type Selectable, sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { KeyAccess, KeyScope } from "./key-access.ts";

export async function insertPartner(db: Executor, partner_id: string, name: string): Promise<void> {
  await sql`insert into partners (partner_id, name) values (${partner_id}, ${name})`.execute(db);
}

export type NewApiKey = {
  key_id: string;
  partner_id: string;
  key_hash: Buffer;
  key_hint: string;
  /** Checked by checkKeyAccess (key-access.ts); absent: no name, full scope, any address. */
  access?: KeyAccess;
};

/** Inserts a key; answers its access as stored (the CIDRs in PostgreSQL's own text form). */
export async function insertApiKey(db: Executor, key: NewApiKey): Promise<KeyAccess> {
  const access = key.access ?? { name: "", scope: "full", allowed_ips: [] };
  const result = await sql<KeyAccess>`
    insert into api_keys (key_id, partner_id, key_hash, key_hint, name, scope, allowed_ips)
    values (${key.key_id}, ${key.partner_id}, ${key.key_hash}, ${key.key_hint}, ${access.name},
      ${access.scope}, ${access.allowed_ips}::cidr[])
    returning name, scope, allowed_ips::text[] as allowed_ips`.execute(db);
  return result.rows[0]!;
}

/**
 * Locks the partner's row until the transaction ends, so changes that must see every other one
 * (counting its keys before adding one) run one at a time per partner. False: no such partner.
 */
export async function lockPartner(db: Executor, partner_id: string): Promise<boolean> {
  const result = await sql<{
    found: number;
  }>`select 1 as found from partners where partner_id = ${partner_id} for update`.execute(db);
  return result.rows.length === 1;
}

export async function countKeys(db: Executor, partner_id: string): Promise<number> {
  const result = await sql<{ n: number }>`
    select count(*)::int as n from api_keys where partner_id = ${partner_id}`.execute(db);
  return result.rows[0]?.n ?? 0;
}

type ApiKeyRow = Selectable<Database["api_keys"]>;

export type KeyRecord = Pick<ApiKeyRow, "key_id" | "partner_id"> & {
  revoked: boolean;
  scope: KeyScope;
  allowed_ips: string[];
  /** The key's partner is suspended (migration 0030): the key may read, never write. */
  suspended: boolean;
};

export async function findKeyByHash(db: Executor, key_hash: Buffer): Promise<KeyRecord | null> {
  const result = await sql<KeyRecord>`
    select k.key_id, k.partner_id, k.revoked_at is not null as revoked, k.scope,
      k.allowed_ips::text[] as allowed_ips, p.status = 'suspended' as suspended
    from api_keys k join partners p on p.partner_id = k.partner_id
    where k.key_hash = ${key_hash}`.execute(db);
  return result.rows[0] ?? null;
}

/** A key's partner and whether it was already revoked, its row locked until the transaction ends. */
export async function lockKey(
  db: Executor,
  key_id: string,
): Promise<{ partner_id: string; revoked: boolean } | null> {
  const result = await sql<{ partner_id: string; revoked: boolean }>`
    select partner_id, revoked_at is not null as revoked
    from api_keys where key_id = ${key_id} for update`.execute(db);
  return result.rows[0] ?? null;
}

/** Revokes (once: a revoked key keeps its time) and tells every process to drop the key from its cache. */
export async function revokeKey(db: Executor, key_id: string): Promise<void> {
  await sql`
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where key_id = ${key_id}`.execute(db);
  await sql`select pg_notify('api_key_revoked', ${key_id})`.execute(db);
}

export async function touchKeys(db: Executor, key_ids: string[]): Promise<void> {
  if (key_ids.length === 0) return;
  await sql`
    update api_keys set last_used_at = now()
    where key_id = any(${key_ids}::text[])`.execute(db);
}

export type PartnerSummary = Selectable<Database["partners"]>;

const PARTNER_COLUMNS = sql`partner_id, name, created_at, require_two_factor, status, suspended_reason, suspended_at`;

export async function listPartners(db: Executor, limit: number): Promise<PartnerSummary[]> {
  const result = await sql<PartnerSummary>`
    select ${PARTNER_COLUMNS} from partners order by created_at desc, partner_id desc limit ${limit}`.execute(
    db,
  );
  return result.rows;
}

export type PartnerSearch = {
  /** Text the name contains (case-insensitive) or a whole partner id (as written); null: every partner. */
  q: string | null;
  status: "active" | "suspended" | null;
  /** The page ends before this (created_at in microseconds since the epoch, partner_id); null: the first page. */
  before: { created_us: string; partner_id: string } | null;
  limit: number;
};

export type PartnerListRow = PartnerSummary & { created_us: string };

/** One page of partners, newest first (partners_newest_idx), filtered by name, id and status. */
export async function searchPartners(db: Executor, search: PartnerSearch): Promise<PartnerListRow[]> {
  const { q, status, before } = search;
  const result = await sql<PartnerListRow>`
    select ${PARTNER_COLUMNS}, (extract(epoch from created_at) * 1000000)::bigint::text as created_us
    from partners
    where (${q}::text is null or partner_id = ${q} or strpos(lower(name), lower(${q})) > 0)
      and (${status}::text is null or status = ${status})
      and (${before?.created_us ?? null}::bigint is null
        or (created_at, partner_id) < (to_timestamp(${before?.created_us ?? null}::bigint / 1000000.0), ${before?.partner_id ?? null}::text))
    order by created_at desc, partner_id desc
    limit ${search.limit}`.execute(db);
  return result.rows;
}

export async function partnerById(db: Executor, partner_id: string): Promise<PartnerSummary | null> {
  const result = await sql<PartnerSummary>`
    select ${PARTNER_COLUMNS} from partners where partner_id = ${partner_id}`.execute(db);
  return result.rows[0] ?? null;
}

/** The partner's row locked until the transaction ends (a PATCH reads, compares and writes it). */
export async function lockedPartner(db: Executor, partner_id: string): Promise<PartnerSummary | null> {
  const result = await sql<PartnerSummary>`
    select ${PARTNER_COLUMNS} from partners where partner_id = ${partner_id} for update`.execute(db);
  return result.rows[0] ?? null;
}

export type PartnerChange = {
  name: string;
  status: "active" | "suspended";
  /** Kept only while suspended (the 0030 check). */
  suspended_reason: string | null;
};

/**
 * Writes the partner's name and standing. A change of standing NOTIFYs every API process, which
 * drops the partner's keys from its cache (server/auth.ts), so the next request of each reads it.
 */
export async function updatePartner(
  db: Executor,
  partner_id: string,
  change: PartnerChange,
  standing_changed: boolean,
): Promise<PartnerSummary> {
  const result = await sql<PartnerSummary>`
    update partners set name = ${change.name}, status = ${change.status},
      suspended_reason = ${change.suspended_reason},
      suspended_at = case when ${change.status} = 'active' then null else coalesce(suspended_at, now()) end
    where partner_id = ${partner_id}
    returning ${PARTNER_COLUMNS}`.execute(db);
  if (standing_changed) await sql`select pg_notify('partner_status_changed', ${partner_id})`.execute(db);
  return result.rows[0]!;
}

/** The partner's standing, for a console session (one primary-key read): null when no such partner. */
export async function partnerStanding(
  db: Executor,
  partner_id: string,
): Promise<Pick<PartnerSummary, "status" | "suspended_reason" | "suspended_at"> | null> {
  const result = await sql<Pick<PartnerSummary, "status" | "suspended_reason" | "suspended_at">>`
    select status, suspended_reason, suspended_at from partners where partner_id = ${partner_id}`.execute(db);
  return result.rows[0] ?? null;
}

export type KeySummary = Pick<
  ApiKeyRow,
  "key_id" | "key_hint" | "created_at" | "revoked_at" | "last_used_at"
> &
  KeyAccess;

export async function listKeys(db: Executor, partner_id: string): Promise<KeySummary[]> {
  const result = await sql<KeySummary>`
    select key_id, key_hint, created_at, revoked_at, last_used_at, name, scope,
      allowed_ips::text[] as allowed_ips
    from api_keys where partner_id = ${partner_id} order by created_at limit 1000`.execute(db);
  return result.rows;
}

/** The key's partner when the key exists and is not revoked. */
export async function activeKeyPartner(db: Executor, key_id: string): Promise<string | null> {
  const result = await sql<{ partner_id: string }>`
    select partner_id from api_keys where key_id = ${key_id} and revoked_at is null`.execute(db);
  return result.rows[0]?.partner_id ?? null;
}

/** Whether an owner requires a second factor of every person of the team (migration 0023). */
export async function selectRequireTwoFactor(db: Executor, partner_id: string): Promise<boolean> {
  const result = await sql<{ require_two_factor: boolean }>`
    select require_two_factor from partners where partner_id = ${partner_id}`.execute(db);
  return result.rows[0]?.require_two_factor ?? false;
}

export async function updateRequireTwoFactor(
  db: Executor,
  partner_id: string,
  required: boolean,
): Promise<void> {
  await sql`update partners set require_two_factor = ${required} where partner_id = ${partner_id}`.execute(
    db,
  );
}

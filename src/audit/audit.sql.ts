// SQL of the audit log (migration 0023). Entries are only ever inserted, and purged past retention.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { PoolClient } from "../db/pool.ts";

export type AuditRow = {
  audit_id: string;
  partner_id: string | null;
  actor_type: "user" | "api_key" | "operator" | "system";
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  ip: string | null;
  details: Record<string, unknown>;
};

/** The same insert on a pg client in a transaction (the catalog import writes through one). */
export async function insertAuditEntryOnClient(client: PoolClient, row: AuditRow): Promise<void> {
  await client.query(
    `insert into audit_log (audit_id, partner_id, actor_type, actor_id, actor_email, action,
                            target_type, target_id, ip, details)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)`,
    [
      row.audit_id,
      row.partner_id,
      row.actor_type,
      row.actor_id,
      row.actor_email,
      row.action,
      row.target_type,
      row.target_id,
      row.ip,
      JSON.stringify(row.details),
    ],
  );
}

export async function insertAuditEntry(db: Executor, row: AuditRow): Promise<void> {
  await sql`
    insert into audit_log (audit_id, partner_id, actor_type, actor_id, actor_email, action,
                           target_type, target_id, ip, details)
    values (${row.audit_id}, ${row.partner_id}, ${row.actor_type}, ${row.actor_id}, ${row.actor_email},
            ${row.action}, ${row.target_type}, ${row.target_id}, ${row.ip}, ${JSON.stringify(row.details)}::jsonb)`.execute(
    db,
  );
}

/** A stored entry as the read routes and pages need it. */
export type StoredAuditRow = AuditRow & { audit_seq: string; created_at: Date };

export type AuditQuery = {
  /** One partner's log (GET /v1/audit-log), or every entry (the operator's view) when null. */
  partner_id: string | null;
  action: string | null;
  /** [from, until): UTC instants, either unbounded when null. */
  from: Date | null;
  until: Date | null;
  /** Entries strictly older than this one (the cursor), or from the newest when null. */
  before_seq: number | null;
  limit: number;
};

/**
 * A page newest first. Only the filters given are in the statement (no `$1 is null or …`, which a
 * generic prepared plan cannot use an index for): a partner's log walks (partner_id, audit_seq) or
 * (partner_id, action, audit_seq) backwards, the operator's the primary key or (action, audit_seq);
 * dates bound the rows that walk reads.
 */
export async function pageOfAuditEntries(db: Executor, query: AuditQuery): Promise<StoredAuditRow[]> {
  const filters = [
    query.partner_id === null ? null : sql`partner_id = ${query.partner_id}`,
    query.action === null ? null : sql`action = ${query.action}`,
    query.from === null ? null : sql`created_at >= ${query.from}`,
    query.until === null ? null : sql`created_at < ${query.until}`,
    query.before_seq === null ? null : sql`audit_seq < ${query.before_seq}`,
  ].filter((filter) => filter !== null);
  const where = filters.length === 0 ? sql`` : sql`where ${sql.join(filters, sql` and `)}`;
  const result = await sql<StoredAuditRow>`
    select audit_seq, audit_id, created_at, partner_id, actor_type, actor_id, actor_email, action,
           target_type, target_id, ip, details
    from audit_log ${where}
    order by audit_seq desc
    limit ${query.limit}`.execute(db);
  return result.rows;
}

/**
 * Deletes up to `batch` entries created before `before`, oldest first, through the created_at
 * index; returns how many. The caller repeats while a batch comes back full. `= any(array(…))`, not
 * `in (…)`: the ids are found first and deleted through the primary key, where `in` let the
 * planner hash-join against a scan of the whole log.
 */
export async function deleteAuditEntriesBefore(db: Executor, before: Date, batch: number): Promise<number> {
  const result = await sql`
    delete from audit_log where audit_seq = any(array(
      select audit_seq from audit_log where created_at < ${before}
      order by created_at limit ${batch}))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

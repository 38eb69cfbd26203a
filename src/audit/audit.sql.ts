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

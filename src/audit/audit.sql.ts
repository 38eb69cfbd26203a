// SQL of the audit log (migration 0023). Entries are only ever inserted, and purged past retention.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

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

export async function insertAuditEntry(db: Executor, row: AuditRow): Promise<void> {
  await sql`
    insert into audit_log (audit_id, partner_id, actor_type, actor_id, actor_email, action,
                           target_type, target_id, ip, details)
    values (${row.audit_id}, ${row.partner_id}, ${row.actor_type}, ${row.actor_id}, ${row.actor_email},
            ${row.action}, ${row.target_type}, ${row.target_id}, ${row.ip}, ${JSON.stringify(row.details)}::jsonb)`.execute(
    db,
  );
}

// Writes one audit entry, inside the caller's transaction (issue 31): the entry exists if and only
// if the change does. Every use case that changes something a person would ask "who did this?"
// about calls this with the actor its route or page passed in.
import type { Executor } from "../db/executor.ts";
import type { PoolClient } from "../db/pool.ts";
import type { Actor } from "../shared/actor.ts";
import { newId } from "../shared/ids.ts";
import { type AuditRow, insertAuditEntry, insertAuditEntryOnClient } from "./audit.sql.ts";

/** The actions the contract names, and ours beside them. */
export type AuditAction =
  | "user.invited"
  | "user.invitation_accepted"
  | "user.joined_via_sso"
  | "user.role_changed"
  | "user.disabled"
  | "user.enabled"
  | "user.signed_in"
  | "user.sign_in_failed"
  | "user.password_reset_requested"
  | "user.password_changed"
  | "user.two_factor_enabled"
  | "user.two_factor_disabled"
  | "user.recovery_code_used"
  | "user.recovery_codes_regenerated"
  | "user.passkey_added"
  | "user.passkey_removed"
  | "team.two_factor_required"
  | "team.sso_updated"
  | "api_key.created"
  | "api_key.revoked"
  | "webhook_endpoint.created"
  | "webhook_endpoint.updated"
  | "webhook_endpoint.deleted"
  | "webhook_endpoint.secret_rotated"
  | "order.refunded"
  | "order.email_resent"
  | "order.settled"
  | "wallet.credited"
  | "wallet.adjusted"
  | "wallet.low_balance_alert_set"
  | "partner.created"
  | "partner.updated"
  | "partner.suspended"
  | "partner.reactivated"
  | "pricing.updated"
  | "catalog.imported"
  | "catalog.synced"
  | "compatible_devices.imported"
  | "branding.updated"
  | "notifications.updated";

export type AuditEntry = {
  actor: Actor;
  action: AuditAction;
  /** Whose log the entry is in; null for the operator's own (an operator user invited). */
  partner_id: string | null;
  target: { type: string; id: string | null };
  details?: Record<string, unknown>;
};

/** Limits what one entry may carry: details are facts (ids, old and new values), never secrets. */
const MAX_DETAILS_BYTES = 8_192;

export async function recordAudit(db: Executor, entry: AuditEntry): Promise<void> {
  await insertAuditEntry(db, auditRow(entry));
}

/** recordAudit for a change made through a pg client in a transaction (the catalog import). */
export async function recordAuditOnClient(client: PoolClient, entry: AuditEntry): Promise<void> {
  await insertAuditEntryOnClient(client, auditRow(entry));
}

function auditRow(entry: AuditEntry): AuditRow {
  const details = entry.details ?? {};
  if (JSON.stringify(details).length > MAX_DETAILS_BYTES) {
    throw new Error(`audit details of ${entry.action} exceed ${MAX_DETAILS_BYTES} bytes`);
  }
  return {
    audit_id: newId("audit"),
    partner_id: entry.partner_id,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_email: entry.actor.email ?? null,
    action: entry.action,
    target_type: entry.target.type,
    target_id: entry.target.id,
    ip: entry.actor.ip,
    details,
  };
}

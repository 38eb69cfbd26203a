// Operator use case: rename a partner, suspend it or reactivate it (PATCH /admin/partners/{id},
// the operator console). One transaction holds the partner's row: it compares, writes, audits and
// (when the standing changes) notifies every API process, which drops the partner's keys from its
// cache, so the next request of each key reads the new standing (server/auth.ts). A PATCH that
// changes nothing writes nothing, not even an audit entry.
import type { Kysely } from "kysely";
import { type AuditEntry, recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError, type FieldErrorCode } from "../shared/errors.ts";
import { checkOneLine, MAX_REASON_LENGTH } from "../shared/schemas.ts";
import type { PartnerStatus } from "./admin-partner.ts";
import { lockedPartner, type PartnerSummary, updatePartner } from "./partners.sql.ts";

/** The database's own limits (migration 0030: suspended_reason, 500, is MAX_REASON_LENGTH). */
export const MAX_SUSPEND_REASON_LENGTH = MAX_REASON_LENGTH;
export const MAX_PARTNER_NAME_LENGTH = 200;

export type PartnerPatch = { name?: string; status?: PartnerStatus; reason?: string };

function invalid(field: string, message: string, code: FieldErrorCode = "invalid_format"): ApiError {
  return new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
}

/** The patch as given, checked: names and reasons trimmed; a suspension needs its reason. */
function checkPatch(patch: PartnerPatch): PartnerPatch {
  if (patch.name === undefined && patch.status === undefined) {
    throw invalid("body", "must give name or status");
  }
  // The API's schema checks the same; the console's forms arrive here unchecked (PostgreSQL refuses NUL).
  const name =
    patch.name === undefined ? undefined : checkOneLine("name", patch.name, MAX_PARTNER_NAME_LENGTH);
  const reason = patch.reason === undefined ? undefined : checkOneLine("reason", patch.reason);
  if (reason !== undefined && patch.status === undefined) throw invalid("reason", "goes with status");
  // The partner's people read it on their console's banner: a suspension always says why.
  if (patch.status === "suspended" && reason === undefined) {
    throw invalid("reason", "is required to suspend a partner (the partner's console shows it)");
  }
  return { name, status: patch.status, reason };
}

/** The audit entries of a change (none for a no-op): one per thing changed. */
function auditEntries(
  before: PartnerSummary,
  after: PartnerSummary,
  reason: string | undefined,
  actor: Actor,
) {
  const target = { type: "partner", id: before.partner_id };
  const base = { actor, partner_id: before.partner_id, target };
  const entries: AuditEntry[] = [];
  if (after.name !== before.name) {
    entries.push({
      ...base,
      action: "partner.updated",
      details: { name: { from: before.name, to: after.name } },
    });
  }
  if (after.status !== before.status || after.suspended_reason !== before.suspended_reason) {
    const action = after.status === "suspended" ? "partner.suspended" : "partner.reactivated";
    entries.push({
      ...base,
      action,
      details: { from: before.status, to: after.status, reason: reason ?? null },
    });
  }
  return entries;
}

export async function patchPartner(
  db: Kysely<Database>,
  partner_id: string,
  given: PartnerPatch,
  actor: Actor,
): Promise<PartnerSummary> {
  const patch = checkPatch(given);
  return db.transaction().execute(async (trx) => {
    const before = await lockedPartner(trx, partner_id);
    if (before === null) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
    const status = patch.status ?? before.status;
    const change = {
      name: patch.name ?? before.name,
      status,
      // Suspending again with a new reason replaces it; reactivating clears it (the audit log keeps it).
      suspended_reason: status === "suspended" ? (patch.reason ?? before.suspended_reason) : null,
    };
    const same =
      change.name === before.name &&
      change.status === before.status &&
      change.suspended_reason === before.suspended_reason;
    if (same) return before;
    const after = await updatePartner(trx, partner_id, change, change.status !== before.status);
    for (const entry of auditEntries(before, after, patch.reason, actor)) await recordAudit(trx, entry);
    return after;
  });
}

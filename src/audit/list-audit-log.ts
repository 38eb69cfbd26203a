// The audit log's reads (issue 31): a partner's own entries (GET /v1/audit-log: what its keys and
// people did, and what the operator did to it), the operator's view of all (GET /admin/audit-log),
// and the console pages of both. Newest first, by keyset pages on audit_seq; filters by action and
// by UTC days.
import { type Static, Type } from "typebox";
import type { Executor } from "../db/executor.ts";
import { DATE_PATTERN } from "../shared/day-range.ts";
import { ApiError, type FieldErrorCode } from "../shared/errors.ts";
import { seqCursor } from "../shared/seq-cursor.ts";
import { pageOfAuditEntries, type StoredAuditRow } from "./audit.sql.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

const cursor = seqCursor("al");

/** An action's shape (`noun.verb_phrase`); an action nobody writes simply finds nothing. */
export const ACTION_PATTERN = "^[a-z][a-z_]{0,39}\\.[a-z][a-z_]{0,39}$";

/** The query filters both routes share. */
export const auditFilters = {
  action: Type.Optional(
    Type.String({
      pattern: ACTION_PATTERN,
      maxLength: 81,
      description: "Only entries of this action (`wallet.credited`, `webhook_endpoint.deleted`, …).",
    }),
  ),
  from: Type.Optional(
    Type.String({
      format: "date",
      pattern: DATE_PATTERN,
      description: "First UTC day included (YYYY-MM-DD).",
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: "date",
      pattern: DATE_PATTERN,
      description: "Last UTC day included (YYYY-MM-DD).",
    }),
  ),
};

export const AuditEntry = Type.Object(
  {
    audit_id: Type.String({ description: "`aud_…`" }),
    created_at: Type.String({ format: "date-time" }),
    actor: Type.Object(
      {
        type: Type.Union([
          Type.Literal("user"),
          Type.Literal("api_key"),
          Type.Literal("operator"),
          Type.Literal("system"),
        ]),
        id: Type.Union([Type.String(), Type.Null()], {
          description:
            "`usr_…` for a person, `key_…` for an API key, `admin_token` for the operator's token, `cli` for " +
            "the operator's command line; null for the service itself or a sign-in naming nobody.",
        }),
        email: Type.Optional(Type.String({ description: "A person's email, when the actor is one." })),
      },
      { additionalProperties: false },
    ),
    action: Type.String({ description: "What was done, e.g. `wallet.credited`." }),
    target: Type.Object(
      { type: Type.String(), id: Type.Union([Type.String(), Type.Null()]) },
      { additionalProperties: false, description: "What it was done to (`order`, `webhook_endpoint`, …)." },
    ),
    ip: Type.Union([Type.String(), Type.Null()], {
      description: "The client's address as the service saw it; null for the command line and the service.",
    }),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description: "Facts of the change (amounts, references, fields changed); never a secret.",
    }),
  },
  { additionalProperties: false },
);
export type AuditEntryBody = Static<typeof AuditEntry>;

export const AuditPage = Type.Object(
  {
    data: Type.Array(AuditEntry),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);
export type AuditPage = Static<typeof AuditPage>;

export type AuditLogQuery = {
  /** The partner whose log is read; null: every entry (the operator's view). */
  partner_id: string | null;
  action: string | null;
  /** UTC days, both included. */
  from: string | null;
  to: string | null;
  limit: number;
  cursor: string | null;
  /** Whose eyes: a partner's view names the operator's staff by id only. */
  view?: "partner" | "operator";
};

/** One entry as the operator's page shows it: the wire entry and whose log it is in. */
export type AuditRecord = { partner_id: string | null; entry: AuditEntryBody };

function invalid(field: string, message: string, code: FieldErrorCode = "invalid_format"): ApiError {
  return new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
}

function dayStart(field: string, date: string): Date {
  const parsed = new Date(`${date}T00:00:00Z`);
  if (
    !new RegExp(DATE_PATTERN).test(date) ||
    Number.isNaN(parsed.getTime()) ||
    parsed.toISOString().slice(0, 10) !== date
  ) {
    throw invalid(field, "is not a calendar date (YYYY-MM-DD)");
  }
  return parsed;
}

/**
 * `for_partner`: a partner's view names the operator's staff by id only (their email is the
 * operator's to show), as it names the operator token.
 */
export function renderAuditEntry(row: StoredAuditRow, for_partner = false): AuditEntryBody {
  const email =
    row.actor_email === null || (for_partner && row.actor_type === "operator") ? null : row.actor_email;
  return {
    audit_id: row.audit_id,
    created_at: row.created_at.toISOString(),
    actor: {
      type: row.actor_type,
      id: row.actor_id,
      ...(email === null ? {} : { email }),
    },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip,
    details: row.details,
  };
}

/** A page of entries with whose log each is in (the console's operator page shows it). */
export async function auditRecords(
  db: Executor,
  query: AuditLogQuery,
): Promise<{ records: AuditRecord[]; has_more: boolean; next_cursor: string | null }> {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE_SIZE) {
    throw new Error(`auditRecords: limit ${query.limit} outside 1-${MAX_PAGE_SIZE}`);
  }
  if (query.action !== null && !new RegExp(ACTION_PATTERN).test(query.action)) {
    throw invalid("action", "is not an action (noun.verb, e.g. wallet.credited)");
  }
  const from = query.from === null ? null : dayStart("from", query.from);
  const to = query.to === null ? null : dayStart("to", query.to);
  if (from && to && from > to) throw invalid("from", "is after to");
  const before_seq = query.cursor === null ? null : cursor.decode(query.cursor);
  // One extra row tells whether another page exists, without a count.
  const rows = await pageOfAuditEntries(db, {
    partner_id: query.partner_id,
    action: query.action,
    from,
    until: to === null ? null : new Date(to.getTime() + 86_400_000),
    before_seq,
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const has_more = rows.length > query.limit;
  return {
    records: page.map((row) => ({
      partner_id: row.partner_id,
      entry: renderAuditEntry(row, query.view === "partner"),
    })),
    has_more,
    next_cursor: has_more ? cursor.encode(Number(page.at(-1)!.audit_seq)) : null,
  };
}

export async function listAuditLog(db: Executor, query: AuditLogQuery): Promise<AuditPage> {
  const { records, has_more, next_cursor } = await auditRecords(db, query);
  return { data: records.map((record) => record.entry), has_more, next_cursor };
}

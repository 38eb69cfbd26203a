// The eSIM endpoints after the sale: details, list (filterable by customerRef, the one field a
// client can set), PUT customerRef, install details, bundles and their usage, and revoke/refund.
import type pg from "pg";
import { type Static, Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import { type Answer, failure, ok } from "./answers.ts";
import {
  type AssignmentRow,
  type EsimRow,
  expireRunning,
  type InstallRow,
  listEsims,
  lockEsims,
  revokeAssignment,
  selectAssignments,
  selectEsim,
  selectInstallDetails,
  selectKnownOrders,
  updateCustomerRef,
} from "./esims.sql.ts";
import { lockOrganisation, moveBalance } from "./orders.sql.ts";
import {
  ASSIGNMENTS_CSV_HEADER,
  ASSIGNMENTS_SINGLE_AS_OBJECT,
  BUNDLE_STATE_CASE,
  LIST_PAGE,
  MESSAGES,
  NOT_FOUND_STATUS,
  REFUND_PERIOD_DAYS,
  REVOKE_STATUS,
} from "./unconfirmed.ts";

/** GET /esims/{iccid} [DOC:api/v2_4/operations/esimsiccid]; an unknown ICCID is a 400, not a 404. */
export async function getEsim(pool: pg.Pool, iccid: string): Promise<Answer> {
  const esim = await selectEsim(pool, iccid);
  if (!esim) return failure(400, MESSAGES.unknown_iccid(iccid));
  return ok(esimDetails(esim));
}

function esimDetails(
  esim: Pick<
    EsimRow,
    "iccid" | "matching_id" | "smdp_address" | "profile_status" | "pin" | "puk" | "first_installed_at"
  >,
) {
  return {
    iccid: esim.iccid,
    matchingId: esim.matching_id,
    smdpAddress: esim.smdp_address,
    profileStatus: esim.profile_status,
    pin: esim.pin,
    puk: esim.puk,
    firstInstalledDateTime: esim.first_installed_at?.toISOString() ?? null,
  };
}

export const ListEsimsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_PAGE.max })),
  direction: Type.Optional(Type.Union([Type.Literal("asc"), Type.Literal("desc")])),
  orderBy: Type.Optional(Type.String({ maxLength: 64 })),
  filterBy: Type.Optional(Type.String({ maxLength: 64 })),
  filter: Type.Optional(Type.String({ maxLength: 256 })),
});
export type ListEsimsQuery = Static<typeof ListEsimsQuery>;

/** filterBy names as the docs spell them ("ICCID, Customer Reference"), to our columns. */
const FILTER_COLUMNS: Record<string, "iccid" | "customer_ref"> = {
  iccid: "iccid",
  customerRef: "customer_ref",
};

/** GET /esims [DOC:api/v2_4/operations/esims/get/]: `eq:` exact, else a like with `*` wildcards (v2.2 changelog). */
export async function listEsimsAnswer(pool: pg.Pool, query: ListEsimsQuery): Promise<Answer> {
  const column = query.filterBy ? FILTER_COLUMNS[query.filterBy] : null;
  if (column === undefined) return failure(400, `filterBy: unsupported ${query.filterBy}`);
  const raw = query.filter ?? "";
  const exact = raw.startsWith("eq:");
  const value = exact ? raw.slice(3) : raw.replace(/^like:/, "");
  const pattern = exact ? value : value.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll("*", "%");
  const perPage = query.perPage ?? LIST_PAGE.default;
  const { rows, total } = await listEsims(
    pool,
    { column: column && raw ? column : null, pattern, exact },
    perPage,
    ((query.page ?? 1) - 1) * perPage,
  );
  return ok({
    esims: rows.map((esim) => ({
      iccid: esim.iccid,
      customerRef: esim.customer_ref ?? "",
      lastAction: esim.last_assigned_at ? "Bundle Assigned" : "eSIM Created",
      actionDate: (esim.last_assigned_at ?? esim.created_at).toISOString(),
      physical: false,
      assignedDate: esim.created_at.toISOString(),
    })),
    pageCount: Math.max(1, Math.ceil(total / perPage)),
    rows: total,
  });
}

export const CustomerRefBody = Type.Object({
  iccid: Type.String({ minLength: 1, maxLength: 32 }),
  customerRef: Type.String({ maxLength: 256 }),
});

/** PUT /esims [DOC:api/v2_4/operations/esims/put]: body {iccid, customerRef}, answer {status: "success"}. */
export async function setCustomerRef(pool: pg.Pool, iccid: string, customerRef: string): Promise<Answer> {
  if (!(await updateCustomerRef(pool, iccid, customerRef)))
    return failure(400, MESSAGES.unknown_iccid(iccid));
  return ok({ status: "success" });
}

/**
 * GET /esims/assignments?reference=… [DOC:api/v2_4/operations/esimsassignments/get]: CSV unless
 * the caller accepts JSON; ZIP (QR PNGs) is not simulated (406). Several references: repeated or
 * comma-separated. A deactivated eSIM: 410; an order still processing: 503 with Retry-After.
 */
export async function installDetails(pool: pg.Pool, references: string[], accept: string): Promise<Answer> {
  if (references.length === 0) return failure(400, "reference is required");
  const known = await selectKnownOrders(pool, references);
  const unknown = references.find((reference) => !known.includes(reference));
  if (unknown) return failure(NOT_FOUND_STATUS, MESSAGES.unknown_order(unknown));
  const rows = await selectInstallDetails(pool, references);
  if (rows.some((row) => !row.ready)) return failure(503, MESSAGES.processing, { "retry-after": "5" });
  const gone = rows.find((row) => row.deactivated);
  if (gone) return failure(410, MESSAGES.deactivated(gone.iccid));
  const format = answerFormat(accept);
  if (format === "zip") return failure(406, "application/zip (QR codes) is not simulated by the sandbox");
  if (format === "json") return ok(installJson(rows));
  return { status: 200, body: installCsv(rows), headers: { "content-type": "text/csv; charset=utf-8" } };
}

function answerFormat(accept: string): "csv" | "json" | "zip" {
  if (accept.includes("application/json")) return "json";
  if (accept.includes("application/zip")) return "zip";
  return "csv";
}

function installJson(rows: InstallRow[]) {
  const items = rows.map((row) => ({ ...esimDetails(row), bundle: row.bundle_name }));
  return ASSIGNMENTS_SINGLE_AS_OBJECT && items.length === 1 ? items[0] : items;
}

function installCsv(rows: InstallRow[]): string {
  const quote = (value: string) => `"${value.replaceAll('"', '""')}"`;
  const lines = rows.map((row) =>
    [row.iccid, row.matching_id, row.smdp_address, row.bundle_name].map(quote).join(","),
  );
  return [ASSIGNMENTS_CSV_HEADER.map(quote).join(","), ...lines].join("\r\n") + "\r\n";
}

export const BundlesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  includeUsed: Type.Optional(Type.Boolean()),
});

const ENDED = ["expired", "depleted", "revoked", "lapsed"];
/** "By default this returns the 15 most recent bundle assignments" ([DOC:guides/bundle_status/]). */
const DEFAULT_ASSIGNMENTS = 15;

/** GET /esims/{iccid}/bundles: {bundles: [{name, description, assignments: [...]}]}, bytes. */
export async function esimBundles(
  pool: pg.Pool,
  iccid: string,
  query: { limit?: number; includeUsed?: boolean },
): Promise<Answer> {
  if (!(await selectEsim(pool, iccid))) return failure(400, MESSAGES.unknown_iccid(iccid));
  await expireRunning(pool, iccid);
  const all = await selectAssignments(pool, iccid, REFUND_PERIOD_DAYS);
  const shown = all
    .filter((row) => query.includeUsed || !ENDED.includes(row.state))
    .slice(-(query.limit ?? DEFAULT_ASSIGNMENTS))
    .reverse();
  const byName = new Map<string, { name: string; description: string; assignments: object[] }>();
  for (const row of shown) {
    const entry = byName.get(row.bundle_name) ?? {
      name: row.bundle_name,
      description: row.description,
      assignments: [],
    };
    entry.assignments.push(assignmentBody(row));
    byName.set(row.bundle_name, entry);
  }
  return ok({ bundles: [...byName.values()] });
}

export function bundleState(state: string): string {
  return BUNDLE_STATE_CASE === "lower" ? state : state[0]!.toUpperCase() + state.slice(1);
}

function assignmentBody(row: AssignmentRow) {
  return {
    id: row.id,
    assignmentReference: row.reference,
    callTypeGroup: "data",
    initialQuantity: row.initial_bytes,
    remainingQuantity: row.remaining_bytes,
    assignmentDateTime: row.assigned_at.toISOString(),
    startTime: row.started_at?.toISOString() ?? null,
    endTime: row.ends_at?.toISOString() ?? null,
    bundleState: bundleState(row.state),
    unlimited: false,
  };
}

/**
 * DELETE /esims/{iccid}/bundles/{name} [DOC:api/v2_4/operations/esimsiccidbundlesname/delete/]:
 * revokes the oldest unused assignment of that bundle, else the latest running one. A refund to
 * balance only for an unstarted, unused one inside the refund period, when the account has refunds
 * enabled and the caller asked for it; otherwise it is only revoked.
 */
export async function revokeBundle(
  pool: pg.Pool,
  iccid: string,
  name: string,
  query: { type: "validate" | "transaction"; refund: boolean },
): Promise<Answer> {
  return inTransaction(pool, async (client) => {
    const organisation = await lockOrganisation(client);
    if ((await lockEsims(client, [iccid])).length === 0) return failure(400, MESSAGES.unknown_iccid(iccid));
    await expireRunning(client, iccid);
    const target = pickRevocable(await selectAssignments(client, iccid, REFUND_PERIOD_DAYS), name);
    if (!target) return failure(400, `No revocable assignment of bundle ${name} on eSIM ${iccid}`);
    const refundable = organisation.refunds_enabled && unused(target) && target.refundable_age;
    if (query.type === "validate") {
      return ok({
        status: refundable ? REVOKE_STATUS.validate_refundable : REVOKE_STATUS.validate_revocable,
      });
    }
    const refund = refundable && query.refund;
    await revokeAssignment(client, target.id, refund ? target.price_cents : null);
    if (refund) await moveBalance(client, target.price_cents);
    return ok({ status: refund ? REVOKE_STATUS.refunded : REVOKE_STATUS.revoked });
  });
}

function unused(row: AssignmentRow): boolean {
  return row.state === "queued" && row.remaining_bytes === row.initial_bytes;
}

function pickRevocable(rows: AssignmentRow[], name: string): AssignmentRow | undefined {
  const mine = rows.filter((row) => row.bundle_name === name);
  return mine.find(unused) ?? mine.filter((row) => row.state === "active" || row.state === "depleted").at(-1);
}

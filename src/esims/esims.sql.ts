// SQL of the partner's view of its eSIMs: one eSIM with its bundles in one round trip (by primary
// key and partner), and pages of them newest first by `seq`. Bundles come as one JSON array, in
// position order (the original first, then top-ups), so a read is a single indexed query.
import { CompiledQuery, type RawBuilder, sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Pool } from "../db/pool.ts";
import type { BundleStatus, EsimStatus } from "../db/schema.ts";
import { joinedOrderConditions, onePartner, splitScan } from "../orders/page-conditions.ts";
import { MAX_ROWS_EXAMINED, type SearchQuery, searchIsIndexed } from "../orders/search-query.ts";
import type { TimeWindow } from "../shared/day-range.ts";
import type { EsimState } from "./render-esim.ts";

/** A bundle as json_agg hands it over: instants are ISO 8601 strings. */
export type BundleJson = {
  order_id: string;
  package_id: string;
  name: string;
  data_mb: number | null;
  data_used_mb: number;
  validity_days: number;
  status: BundleStatus;
  activated_at: string | null;
  expires_at: string | null;
};

/** What render needs (render-esim.ts's EsimState), with the keyset and the bundles as JSON. */
export type EsimWithBundlesRow = EsimState & { seq: number; bundles: BundleJson[] };

// Bigints (seq, data_used_mb) arrive as numbers: pool.ts parses int8, and JSON writes them as numbers.
const ESIM_WITH_BUNDLES_COLUMNS = `
  e.iccid, e.order_id, o.client_reference, e.created_at, e.status, e.installed_at, e.activated_at,
  e.expires_at, e.usage_updated_at, e.smdp_address, e.activation_code, e.install_token, e.seq,
  coalesce((
    select json_agg(json_build_object(
             'order_id', b.order_id, 'package_id', b.package_id, 'name', b.name, 'data_mb', b.data_mb,
             'data_used_mb', b.data_used_mb, 'validity_days', b.validity_days, 'status', b.status,
             'activated_at', b.activated_at, 'expires_at', b.expires_at)
           order by b.position)
    from esim_bundles b where b.iccid = e.iccid), '[]'::json) as bundles`;
const ESIM_WITH_BUNDLES = sql.raw(ESIM_WITH_BUNDLES_COLUMNS);

/** One eSIM of one partner: $1 the ICCID, $2 the partner. */
const ONE_ESIM_TEXT = `
  select ${ESIM_WITH_BUNDLES_COLUMNS}
  from esims e join orders o on o.order_id = e.order_id
  where e.iccid = $1 and e.partner_id = $2`;

/**
 * The eSIM with its bundles, or null. On the pool (the GET route, the hottest eSIM read) it runs as
 * a prepared statement once the pool has seen its text a few times (src/db/pool.ts): each
 * connection then parses and plans it once, which halves what a read costs both processes
 * (bench/README.md, esim-read), and a statement a migration broke (a returned column's type
 * changed) runs unnamed on that connection from then on, as every prepared text does. On an
 * executor (a transaction that renders the eSIM it changed) it is the same text.
 */
export async function esimWithBundles(
  db: Executor | Pool,
  partner_id: string,
  iccid: string,
): Promise<EsimWithBundlesRow | null> {
  const values = [iccid, partner_id];
  const result =
    "executeQuery" in db
      ? await db.executeQuery<EsimWithBundlesRow>(CompiledQuery.raw(ONE_ESIM_TEXT, values))
      : await db.query<EsimWithBundlesRow>(ONE_ESIM_TEXT, values);
  return result.rows[0] ?? null;
}

/**
 * The conditions of the search and the exact `client_reference` on the eSIM and the order that
 * bought it (`o`): the ICCID and the order id by the eSIM's own keys; the traveller's email, the
 * prefixes and the reference as the orders domain reads them (joinedOrderConditions, through the
 * orders indexes of migration 0028). The plans: test/orders.search-plans.test.ts.
 */
function esimConditions(input: EsimPageQuery): RawBuilder<unknown>[] {
  const search = input.search ?? null;
  const parts: RawBuilder<unknown>[] = [];
  if (search?.kind === "order_id") parts.push(sql`e.order_id = ${search.order_id}`);
  if (search?.kind === "iccid") parts.push(sql`e.iccid = ${search.iccid}`);
  const of_order = joinedOrderConditions("o", input.partner_id, {
    client_reference: input.client_reference,
    search: search?.kind === "email" || search?.kind === "prefix" ? search : null,
  });
  if (of_order !== null) parts.push(of_order);
  if (input.window?.from) parts.push(sql`e.created_at >= ${input.window.from}`);
  if (input.window?.until) parts.push(sql`e.created_at < ${input.window.until}`);
  return parts;
}

export type EsimPageQuery = {
  partner_id: string;
  client_reference: string | null;
  search?: SearchQuery | null;
  status: EsimStatus | null;
  /** e.created_at in [from, until). */
  window?: TimeWindow | null;
  before_seq: number | null;
  limit: number;
};

/** Each row of a page statement: whether it matches the filters, and its place among the rows examined. */
type ScanMark = { matched: boolean; examined: number };

/**
 * The statement of a page, unrun: pageOfEsims runs it, the plans test explains it. As orders'
 * (orderPageStatement): filters an index narrows (an exact reference, a search other than a short
 * prefix) are read through it; any other page reads the partner's newest-first index (with the status,
 * esims_partner_status_idx), at most MAX_ROWS_EXAMINED rows, and returns the last row examined.
 */
export function esimPageStatement(input: EsimPageQuery): RawBuilder<EsimWithBundlesRow & ScanMark> {
  const conditions = esimConditions(input);
  const status = input.status === null ? sql`` : sql`and e.status = ${input.status}`;
  const below = input.before_seq === null ? sql`` : sql`and e.seq < ${input.before_seq}`;
  const narrowed = input.client_reference !== null || (input.search != null && searchIsIndexed(input.search));
  if (narrowed)
    return sql<EsimWithBundlesRow & ScanMark>`
      select ${ESIM_WITH_BUNDLES}, true as matched, 0 as examined
      from esims e join orders o on o.order_id = e.order_id
      where e.partner_id = ${input.partner_id} ${status} and ${sql.join(conditions, sql` and `)} ${below}
      order by e.seq desc
      limit ${input.limit}`;
  const matched = conditions.length === 0 ? sql`true` : sql.join(conditions, sql` and `);
  // As onePartner: a status as a range of one value, in the order only esims_partner_status_idx
  // yields, or the generic plan reads esims_partner_page_idx and counts only the rows of that status.
  const order =
    input.status === null ? sql`e.partner_id, e.seq desc` : sql`e.partner_id, e.status, e.seq desc`;
  const of_status =
    input.status === null ? sql`` : sql`and e.status >= ${input.status} and e.status <= ${input.status}`;
  return sql<EsimWithBundlesRow & ScanMark>`
    select ${ESIM_WITH_BUNDLES}, ${matched} as matched, e.examined
    from (
      select e.*, row_number() over (order by ${order}) as examined from esims e
      where ${onePartner(input.partner_id, "e")} ${of_status} ${below}
      order by ${order}
      limit ${MAX_ROWS_EXAMINED}
    ) e
    join orders o on o.order_id = e.order_id
    where (${matched}) or e.examined = ${MAX_ROWS_EXAMINED}
    order by ${order}
    limit ${input.limit}`;
}

export async function pageOfEsims(
  db: Executor,
  input: EsimPageQuery,
): Promise<{ rows: EsimWithBundlesRow[]; examined_to: number | null }> {
  return splitScan((await esimPageStatement(input).execute(db)).rows);
}

/** What the QR image is drawn from: the eSIM's activation code parts, if it is the partner's. */
export async function esimActivation(
  db: Executor,
  partner_id: string,
  iccid: string,
): Promise<{ smdp_address: string; activation_code: string } | null> {
  const result = await sql<{ smdp_address: string; activation_code: string }>`
    select smdp_address, activation_code from esims
    where iccid = ${iccid} and partner_id = ${partner_id}`.execute(db);
  return result.rows[0] ?? null;
}

/** What the install page shows: the eSIM as its partner sees it, its partner and the order's language and status. */
export type InstallPageRow = EsimWithBundlesRow & {
  partner_id: string;
  language: string;
  order_status: "pending" | "completed" | "failed" | "refunded";
};

/** The eSIM whose install page has this token (the unique index of migration 0042), or null. */
export async function esimByInstallToken(
  db: Executor,
  install_token: string,
): Promise<InstallPageRow | null> {
  const result = await sql<InstallPageRow>`
    select ${ESIM_WITH_BUNDLES}, e.partner_id, o.language, o.status as order_status
    from esims e join orders o on o.order_id = e.order_id
    where e.install_token = ${install_token}`.execute(db);
  return result.rows[0] ?? null;
}

/**
 * Gives the partner's eSIM a new install token, as migration 0042 drew the first: the old address
 * stops answering. The Esim renders the page's address, so every process's cached Esim is dropped
 * (`esim_changed`, esim-cache.ts). Returns the new token, or null when the partner has no such eSIM.
 */
export async function replaceInstallToken(
  db: Executor,
  partner_id: string,
  iccid: string,
): Promise<string | null> {
  const result = await sql<{ install_token: string }>`
    update esims set install_token = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
    where iccid = ${iccid} and partner_id = ${partner_id}
    returning install_token, pg_notify('esim_changed', iccid)`.execute(db);
  return result.rows[0]?.install_token ?? null;
}

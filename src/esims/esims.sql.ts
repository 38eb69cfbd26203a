// SQL of the partner's view of its eSIMs: one eSIM with its bundles in one round trip (by primary
// key and partner), and pages of them newest first by `seq`. Bundles come as one JSON array, in
// position order (the original first, then top-ups), so a read is a single indexed query.
import { CompiledQuery, type RawBuilder, sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Pool } from "../db/pool.ts";
import { folded, startsWithLower } from "../db/prefix-match.ts";
import type { BundleStatus, EsimStatus } from "../db/schema.ts";
import type { SearchQuery } from "../orders/search-query.ts";
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
  e.expires_at, e.usage_updated_at, e.smdp_address, e.activation_code, e.seq,
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
 * The search (search-query.ts) over the eSIM and the order that bought it: the ICCID and the order id
 * by the eSIM's own keys, the traveller's email and the prefixes through the orders indexes of
 * migration 0028 (o.partner_id named so that they apply). The plans: test/orders.search.test.ts.
 */
function esimSearchCondition(search: SearchQuery, partner_id: string): RawBuilder<boolean> {
  switch (search.kind) {
    case "order_id":
      return sql<boolean>`e.order_id = ${search.order_id}`;
    case "iccid":
      return sql<boolean>`e.iccid = ${search.iccid}`;
    case "email":
      return sql<boolean>`o.partner_id = ${partner_id} and ${folded(sql`o.email`)} = ${folded(sql`${search.email}::text`)}`;
    case "prefix":
      return sql<boolean>`o.partner_id = ${partner_id}
        and ((o.client_reference is not null and ${startsWithLower(folded(sql`o.client_reference`), search.prefix, search.like)})
          or ${startsWithLower(folded(sql`o.last_name`), search.prefix, search.like)})`;
  }
}

/** The exact (case-sensitive) `client_reference` filter, through migration 0028's folded index. */
function exactReference(partner_id: string, client_reference: string): RawBuilder<unknown> {
  return sql`and o.partner_id = ${partner_id} and ${folded(sql`o.client_reference`)} = ${folded(sql`${client_reference}::text`)}
    and o.client_reference = ${client_reference}`;
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

/** The statement of a page, unrun: pageOfEsims runs it, the plans test explains it. */
export function esimPageStatement(input: EsimPageQuery): RawBuilder<EsimWithBundlesRow> {
  const window = input.window ?? { from: null, until: null };
  return sql<EsimWithBundlesRow>`
    select ${ESIM_WITH_BUNDLES}
    from esims e join orders o on o.order_id = e.order_id
    where e.partner_id = ${input.partner_id}
      ${input.status === null ? sql`` : sql`and e.status = ${input.status}`}
      ${input.client_reference === null ? sql`` : exactReference(input.partner_id, input.client_reference)}
      ${input.search ? sql`and ${esimSearchCondition(input.search, input.partner_id)}` : sql``}
      ${window.from === null ? sql`` : sql`and e.created_at >= ${window.from}`}
      ${window.until === null ? sql`` : sql`and e.created_at < ${window.until}`}
      ${input.before_seq === null ? sql`` : sql`and e.seq < ${input.before_seq}`}
    order by e.seq desc
    limit ${input.limit}`;
}

export async function pageOfEsims(db: Executor, input: EsimPageQuery): Promise<EsimWithBundlesRow[]> {
  return (await esimPageStatement(input).execute(db)).rows;
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

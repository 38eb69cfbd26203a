// SQL of the catalog change feed (migration 0041): the change log, the packages its changes are
// rendered from, and how far the log has become package.* events. Private to src/catalog/. The
// writers run on a pg client (the import, the sync, the seed) or a Kysely transaction (a price
// list): each statement is written once, as text, and runs on either.
import { CompiledQuery } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { PoolClient } from "../db/pool.ts";
import type { DestinationPackageRow } from "./list-destination-packages.sql.ts";

/** Where a catalog statement runs: a pg client in a transaction, or Kysely (a transaction or the pool). */
export type CatalogDb = Pick<PoolClient, "query"> | Executor;

async function run<Row>(db: CatalogDb, text: string, values: unknown[]): Promise<Row[]> {
  if ("executeQuery" in db) return (await db.executeQuery<Row>(CompiledQuery.raw(text, values))).rows;
  return (await db.query(text, values)).rows as Row[];
}

export type ChangeKind = "added" | "updated" | "removed";

export type ChangeRow = {
  seq: number;
  change_id: string;
  /** null: catalog-wide. */
  partner_id: string | null;
  kind: ChangeKind;
  package_id: string;
  created_at: Date;
};

/** Rows per insert: keeps a statement's parameters a few MB whatever the catalog's size. */
const MAX_CHANGES_PER_INSERT = 10_000;

/**
 * Locks the catalog_version row for the rest of the transaction (a no-op when this transaction has
 * already bumped it). Every catalog writer bumps that row, so while one holds it no other can add
 * to the log: seq is taken in commit order, and a reader's `seq > cursor` never skips a row that
 * commits later.
 */
export async function lockChangeLog(db: CatalogDb): Promise<void> {
  await run(db, "select version from catalog_version for no key update", []);
}

/** Appends changes in the given order; partner_id null: catalog-wide. Call after lockChangeLog. */
export async function insertChanges(
  db: CatalogDb,
  partner_id: string | null,
  changes: Array<{ change_id: string; kind: ChangeKind; package_id: string }>,
): Promise<void> {
  for (let start = 0; start < changes.length; start += MAX_CHANGES_PER_INSERT) {
    const batch = changes.slice(start, start + MAX_CHANGES_PER_INSERT);
    await run(
      db,
      `insert into catalog_changes (change_id, partner_id, kind, package_id)
       select t.change_id, $4::text, t.kind, t.package_id
       from unnest($1::text[], $2::text[], $3::text[]) with ordinality as t(change_id, kind, package_id, n)
       order by t.n`,
      [batch.map((c) => c.change_id), batch.map((c) => c.kind), batch.map((c) => c.package_id), partner_id],
    );
  }
}

const CHANGE_COLUMNS = "seq, change_id, partner_id, kind, package_id, created_at";

/**
 * The partner's changes after `after_seq`, oldest first: the catalog-wide ones and its own, each
 * read as a range of its own index and merged.
 */
export async function pageOfChanges(
  db: CatalogDb,
  input: { partner_id: string; after_seq: number; limit: number },
): Promise<ChangeRow[]> {
  const rows = await run<ChangeRow>(
    db,
    `select ${CHANGE_COLUMNS} from (
       (select ${CHANGE_COLUMNS} from catalog_changes
        where partner_id is null and seq > $2::bigint order by seq limit $3::integer)
       union all
       (select ${CHANGE_COLUMNS} from catalog_changes
        where partner_id = $1::text and seq > $2::bigint order by seq limit $3::integer)
     ) c
     order by seq
     limit $3::integer`,
    [input.partner_id, input.after_seq, input.limit],
  );
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

/**
 * Up to `limit` changes of every partner after a position, oldest first: the fan-out's window.
 * `last_partner_id` null: every partner of `last_seq` is done; else that seq is read again.
 */
export async function changesFrom(
  db: CatalogDb,
  position: { last_seq: number; last_partner_id: string | null },
  limit: number,
): Promise<ChangeRow[]> {
  const rows = await run<ChangeRow>(
    db,
    `select ${CHANGE_COLUMNS} from catalog_changes
     where seq > $1::bigint or (seq = $1::bigint and $2::text is not null)
     order by seq limit $3::integer`,
    [position.last_seq, position.last_partner_id, limit],
  );
  return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
}

export type FanOutPosition = { last_seq: number; last_partner_id: string | null };

/** Locks the fan-out's position, or null when another process holds it (SKIP LOCKED). */
export async function lockFanOutPosition(db: CatalogDb): Promise<FanOutPosition | null> {
  const rows = await run<FanOutPosition>(
    db,
    "select last_seq, last_partner_id from catalog_change_fanout for update skip locked",
    [],
  );
  const row = rows[0];
  return row === undefined ? null : { last_seq: Number(row.last_seq), last_partner_id: row.last_partner_id };
}

export async function saveFanOutPosition(db: CatalogDb, position: FanOutPosition): Promise<void> {
  await run(db, "update catalog_change_fanout set last_seq = $1::bigint, last_partner_id = $2::text", [
    position.last_seq,
    position.last_partner_id,
  ]);
}

/**
 * These packages as discovery reads them, if offered: active and not top-up-only (a retired one,
 * or a supplier's top-up product, is left out: no partner can buy it as a new eSIM). Every column (`p.*`): the row goes through discovery's toPackage, which picks what partners
 * see, so a column added for the Package object reaches the feed without a second list here.
 */
export async function activePackagesByIds(
  db: CatalogDb,
  package_ids: string[],
): Promise<DestinationPackageRow[]> {
  if (package_ids.length === 0) return [];
  return run<DestinationPackageRow>(
    db,
    `select p.*,
            array(select pd.destination_code from package_destinations pd
                  where pd.package_id = p.package_id order by pd.destination_code) as destination_codes
     from packages p
     where p.package_id = any($1::text[]) and p.active and not p.top_up_only`,
    [package_ids],
  );
}

export type PriceTermsRow = {
  partner_id: string;
  discount_percent: number;
  overrides: Array<{ package_id: string; amount_minor: number }>;
};

/** Each partner's discount and its overrides of these packages (a partner without pricing: 0, none). */
export async function priceTermsOf(
  db: CatalogDb,
  partner_ids: string[],
  package_ids: string[],
): Promise<PriceTermsRow[]> {
  if (partner_ids.length === 0) return [];
  return run<PriceTermsRow>(
    db,
    `select p.partner_id, coalesce(pp.discount_percent, 0) as discount_percent,
            coalesce((select json_agg(json_build_object('package_id', o.package_id,
                                                        'amount_minor', o.amount_minor))
                      from partner_price_overrides o
                      where o.partner_id = p.partner_id and o.package_id = any($2::text[])), '[]'::json)
              as overrides
     from unnest($1::text[]) as p(partner_id)
     left join partner_pricing pp on pp.partner_id = p.partner_id`,
    [partner_ids, package_ids],
  );
}

/** Every active package's list price: what a price list change is compared on. */
export async function activeListPrices(
  db: CatalogDb,
): Promise<Array<{ package_id: string; wholesale_minor: number }>> {
  const rows = await run<{ package_id: string; wholesale_minor: string | number }>(
    db,
    "select package_id, wholesale_minor from packages where active order by package_id",
    [],
  );
  return rows.map((row) => ({ package_id: row.package_id, wholesale_minor: Number(row.wholesale_minor) }));
}

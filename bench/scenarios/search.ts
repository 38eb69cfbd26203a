// Search (issue 32): a support person's searches through the real HTTP API against a million orders
// of one partner among others, one run per kind of `q` (an order id, an ICCID, a traveller's email in
// capitals, a client reference's start, a rare last name's start), each going round a thousand
// different values so that every request reads its own rows. The orders are loaded in SQL
// (test/support/order-rows.ts, generate_series: a minute, where a million purchases over HTTP would
// take hours), then analysed, and removed after the runs (they have no ledger transfers, which the
// audit at the end of the bench would report). Printed beside discovery's figures: the search's target is discovery's
// latency class (p99 within a few milliseconds of it), not its rate, which a cache sets.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { sql } from "kysely";
import { createKysely } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";
import { requestBytes } from "../../test/support/http.ts";
import { removeSeededOrders, seedOrders } from "../../test/support/order-rows.ts";
import { type Context, log, READ_CONNECTIONS, type ScenarioResult } from "../support/context.ts";
import { measureWrk, record, wrkOptions } from "../support/runner.ts";

/** Orders of the searched partner, and of each of the two others beside it. */
export const SEARCHED_ORDERS = 1_000_000;
const OTHER_ORDERS = 100_000;
/** Distinct values each run goes round. */
const VALUES_PER_KIND = 1_000;

/**
 * A kind of search: `values`, an expression over the searched partner's orders giving each `q`; or
 * `paths`, the filters without `q` that no index narrows (status, type, dates, a short prefix), each
 * page examining at most MAX_ROWS_EXAMINED orders: the worst, a filter nothing matches.
 */
type Kind =
  | { label: string; name: string; values: string }
  | { label: string; name: string; paths: string[] };

const LETTERS = [..."abcdefghijklmnopqrstuvwxyz"];

/** The q values of each kind, drawn from the searched partner's rows spread over all its history. */
const KINDS: Kind[] = [
  { label: "order-id", name: "order id", values: "order_id" },
  { label: "iccid", name: "ICCID", values: "iccid" },
  { label: "email", name: "email, other case", values: "upper(email)" },
  {
    label: "reference",
    name: "client reference prefix",
    values: "left(lower(client_reference), length(client_reference) - 1)",
  },
  { label: "last-name", name: "rare last name prefix", values: "left(upper(last_name), 6)" },
  {
    label: "one-letter",
    name: "one-letter prefix, each letter",
    paths: LETTERS.map((letter) => `/v1/profile/orders?q=${letter}`),
  },
  {
    label: "to-2001",
    name: "to=2001-01-01 (no order matches)",
    paths: ["/v1/profile/orders?to=2001-01-01"],
  },
  {
    label: "topup-refunded",
    name: "type=topup&status=refunded (no order matches)",
    paths: ["/v1/profile/orders?type=topup&status=refunded"],
  },
  {
    label: "status-failed",
    name: "status=failed (1 order in 20)",
    paths: ["/v1/profile/orders?status=failed"],
  },
];

async function load(ctx: Context): Promise<void> {
  const db = createKysely<Database>(ctx.pool);
  const [searched, ...others] = ctx.partners;
  const started = Date.now();
  await seedOrders(db, {
    partner_id: searched!.partner_id,
    partner_no: 1,
    tag: "shop",
    first: 1,
    last: SEARCHED_ORDERS,
  });
  for (const [index, other] of others.slice(0, 2).entries()) {
    await seedOrders(db, {
      partner_id: other.partner_id,
      partner_no: index + 2,
      tag: `other${index}`,
      first: 1,
      last: OTHER_ORDERS,
    });
  }
  await sql`analyze orders`.execute(db);
  await sql`analyze esims`.execute(db);
  await sql`analyze carts`.execute(db);
  log(
    `search: ${SEARCHED_ORDERS + 2 * OTHER_ORDERS} orders loaded and analysed in ${Math.round((Date.now() - started) / 1000)} s`,
  );
}

/** A file of paths, one per value of this kind, for search.lua, and its first path. */
async function pathsFile(ctx: Context, kind: Kind): Promise<{ file: string; first: string }> {
  if ("paths" in kind) return writePaths(ctx, kind.label, kind.paths);
  const partner_id = ctx.partners[0]!.partner_id;
  const filter =
    kind.label === "last-name"
      ? sql`and last_name like 'Q%'`
      : kind.label === "iccid"
        ? sql`and iccid is not null`
        : sql``;
  // One order in 101 (coprime to the seeded patterns' periods), shuffled: old and new ones alike.
  const rows = await sql<{ q: string }>`
    select ${sql.raw(kind.values)} as q from orders
    where partner_id = ${partner_id} and seq % 101 = 0 ${filter}
    order by md5(seq::text) limit ${VALUES_PER_KIND}`.execute(createKysely<Database>(ctx.pool));
  const paths = rows.rows.map((row) => `/v1/profile/orders?q=${encodeURIComponent(row.q)}`);
  return writePaths(ctx, kind.label, paths);
}

async function writePaths(
  ctx: Context,
  label: string,
  paths: string[],
): Promise<{ file: string; first: string }> {
  const file = path.join(ctx.tmp, `search-${label}.txt`);
  await writeFile(file, `${paths.join("\n")}\n`);
  return { file, first: paths[0]! };
}

export async function search(ctx: Context, discovery: ScenarioResult | null): Promise<void> {
  await load(ctx);
  const key = ctx.partners[0]!.api_key;
  for (const kind of KINDS) {
    const { file, first: sample } = await pathsFile(ctx, kind);
    const answer = await requestBytes(ctx.service.url, sample, key);
    const body =
      answer.status === 200
        ? (JSON.parse(answer.body.toString("utf8")) as { data: unknown[]; next_cursor: string | null })
        : null;
    const found = body === null ? -1 : body.data.length;
    // A filter nothing matches answers an empty page with a cursor: the next MAX_ROWS_EXAMINED to examine.
    if (body === null || (found < 1 && body.next_cursor === null))
      throw new Error(`search: ${sample} answered ${answer.status} with ${found} orders`);
    const result = await measureWrk(ctx, {
      label: `search-${kind.label}`,
      name: `search by ${kind.name} (1M orders)`,
      target: "discovery's latency class",
      concurrency: READ_CONNECTIONS,
      options: wrkOptions(ctx, ctx.service.url, {
        script: "search.lua",
        env: { BENCH_PATHS_FILE: file, BENCH_API_KEY: key },
      }),
      counted_by_script: false,
    });
    result.notes.push(
      `${"paths" in kind ? kind.paths.length : VALUES_PER_KIND} different values, e.g. ${sample} (${found} orders on its first page)`,
    );
    if (discovery) {
      result.notes.push(
        `discovery in this run: ${Math.round(discovery.ok_per_s)} ok/s, p50 ${discovery.p50_ms} ms, p99 ${discovery.p99_ms} ms`,
      );
    }
    record(ctx, result);
  }
  // The seeded orders have no ledger transfers: the audit after the last scenario would report them.
  const removed = await removeSeededOrders(createKysely<Database>(ctx.pool));
  log(`search: ${removed} seeded orders removed`);
}

// The Airalo adapter's own table (migration 0032, airalo_orders): our intent per reference, written
// before each POST, and what Airalo answered or a lookup found. Plain SQL over a pg pool, as the
// ES2+ adapter's (src/carrier/es2plus/es2plus.sql.ts): the adapter sits below the domains.
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

export type IntentRow = {
  reference: string;
  kind: "sim" | "topup";
  package_id: string;
  iccid: string | null;
  data_mb: number | null;
  requested_at: Date | null;
  posts: number;
  airalo_order_id: string | null;
  smdp_address: string | null;
  matching_id: string | null;
  refusal: string | null;
  refund_requested_at: Date | null;
  refund_id: string | null;
  created_at: Date;
};

const COLUMNS =
  "reference, kind, package_id, iccid, data_mb, requested_at, posts, airalo_order_id::text, smdp_address, " +
  "matching_id, refusal, refund_requested_at, refund_id, created_at";

export async function selectIntent(db: Queryable, reference: string): Promise<IntentRow | null> {
  const result = await db.query<IntentRow>(`select ${COLUMNS} from airalo_orders where reference = $1`, [
    reference,
  ]);
  return result.rows[0] ?? null;
}

/** The stored intent, or a new one (nothing posted yet). A reference is one kind for good. */
export async function recordIntent(
  db: Queryable,
  intent: {
    reference: string;
    kind: "sim" | "topup";
    package_id: string;
    iccid: string | null;
    data_mb: number | null;
  },
): Promise<IntentRow> {
  await db.query(
    `insert into airalo_orders (reference, kind, package_id, iccid, data_mb) values ($1, $2, $3, $4, $5)
     on conflict (reference) do nothing`,
    [intent.reference, intent.kind, intent.package_id, intent.iccid, intent.data_mb],
  );
  const stored = await selectIntent(db, intent.reference);
  if (stored === null) throw new Error(`airalo_orders: the intent of ${intent.reference} vanished`);
  return stored;
}

/**
 * The right to send one POST for `reference`, taken by one statement: only if nothing is known of
 * it yet and nobody posted since we read it (`posts` as `seen_posts`, a version: the caller read
 * `requested_at` null, or a POST a lookup found absent and older than the in-flight window). False:
 * another caller took it, or it is settled.
 */
export async function claimPost(db: Queryable, reference: string, seen_posts: number): Promise<boolean> {
  const result = await db.query(
    `update airalo_orders set requested_at = now(), posts = posts + 1
     where reference = $1 and airalo_order_id is null and refusal is null and posts = $2`,
    [reference, seen_posts],
  );
  return result.rowCount === 1;
}

/** Airalo said nothing was made (429, 401, "try later"): the next call may post at once. */
export async function releaseClaim(db: Queryable, reference: string): Promise<void> {
  await db.query(
    "update airalo_orders set requested_at = null where reference = $1 and airalo_order_id is null",
    [reference],
  );
}

/** Airalo's order for the reference, from its answer or a lookup; the first one recorded stays. */
export async function recordAnswer(
  db: Queryable,
  reference: string,
  answer: {
    airalo_order_id: string;
    iccid: string | null;
    smdp_address: string | null;
    matching_id: string | null;
  },
): Promise<IntentRow> {
  await db.query(
    `update airalo_orders set airalo_order_id = $2, iccid = coalesce(iccid, $3), smdp_address = $4,
       matching_id = $5, answered_at = now()
     where reference = $1 and airalo_order_id is null and refusal is null`,
    [reference, answer.airalo_order_id, answer.iccid, answer.smdp_address, answer.matching_id],
  );
  const stored = await selectIntent(db, reference);
  if (stored === null) throw new Error(`airalo_orders: the intent of ${reference} vanished`);
  return stored;
}

export async function recordRefusal(db: Queryable, reference: string, refusal: string): Promise<void> {
  await db.query(
    `update airalo_orders set refusal = $2, answered_at = now()
     where reference = $1 and airalo_order_id is null and refusal is null`,
    [reference, refusal.slice(0, 500)],
  );
}

/** Airalo order ids already recorded for another reference of ours: never taken for this one. */
export async function claimedOrderIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const result = await db.query<{ id: string }>(
    "select airalo_order_id::text as id from airalo_orders where airalo_order_id = any($1::bigint[])",
    [ids],
  );
  return new Set(result.rows.map((row) => row.id));
}

/** Our top-ups of one eSIM still without an answer, for one package: the candidates of a recovery. */
export async function unansweredTopUps(db: Queryable, iccid: string, package_id: string): Promise<string[]> {
  const result = await db.query<{ reference: string }>(
    `select reference from airalo_orders
     where kind = 'topup' and iccid = $1 and package_id = $2 and airalo_order_id is null and refusal is null
       and requested_at is not null`,
    [iccid, package_id],
  );
  return result.rows.map((row) => row.reference);
}

/** Our top-ups of one package on one eSIM that Airalo answered: the ones its history accounts for. */
export async function answeredTopUpCount(db: Queryable, iccid: string, package_id: string): Promise<number> {
  const result = await db.query<{ count: number }>(
    `select count(*)::int as count from airalo_orders
     where kind = 'topup' and iccid = $1 and package_id = $2 and airalo_order_id is not null`,
    [iccid, package_id],
  );
  return result.rows[0]?.count ?? 0;
}

/** Every order of ours on one eSIM, the eSIM's own first, then its top-ups in Airalo's order. */
export async function ordersOfEsim(db: Queryable, iccid: string): Promise<IntentRow[]> {
  const result = await db.query<IntentRow>(
    `select ${COLUMNS} from airalo_orders where iccid = $1 and airalo_order_id is not null
     order by (kind = 'sim') desc, airalo_order_id limit 1000`,
    [iccid],
  );
  return result.rows;
}

/** Before a POST /v2/refund: whether one was sent for this reference before (its answer maybe lost). */
export async function markRefundRequested(db: Queryable, reference: string): Promise<void> {
  await db.query("update airalo_orders set refund_requested_at = now() where reference = $1", [reference]);
}

export async function recordRefundId(db: Queryable, reference: string, refund_id: string): Promise<void> {
  await db.query("update airalo_orders set refund_id = $2 where reference = $1 and refund_id is null", [
    reference,
    refund_id.slice(0, 100),
  ]);
}

/** The database's clock: the in-flight window is measured against `requested_at`, which it wrote. */
export async function databaseNow(db: Queryable): Promise<Date> {
  const result = await db.query<{ now: Date }>("select now() as now");
  return result.rows[0]!.now;
}

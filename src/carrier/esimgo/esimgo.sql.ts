// The eSIM Go adapter's own table (migration 0033, esimgo_orders): our intent per reference,
// written before each POST, and what eSIM Go answered or a lookup found. Plain SQL over a pg pool,
// as the Airalo adapter's (src/carrier/airalo/airalo.sql.ts): the adapter sits below the domains.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";

type Queryable = Pick<pg.Pool, "query">;

export type IntentRow = {
  reference: string;
  kind: "esim" | "topup";
  item: string;
  iccid: string | null;
  requested_at: Date | null;
  posts: number;
  order_reference: string | null;
  smdp_address: string | null;
  matching_id: string | null;
  refusal: string | null;
  customer_ref_set: boolean;
  refund_requested_at: Date | null;
  refunded_at: Date | null;
  refund_refusal: string | null;
  created_at: Date;
};

const COLUMNS =
  "reference, kind, item, iccid, requested_at, posts, order_reference, smdp_address, matching_id, refusal, " +
  "customer_ref_set, refund_requested_at, refunded_at, refund_refusal, created_at";

export async function selectIntent(db: Queryable, reference: string): Promise<IntentRow | null> {
  const result = await db.query<IntentRow>(`select ${COLUMNS} from esimgo_orders where reference = $1`, [
    reference,
  ]);
  return result.rows[0] ?? null;
}

/** The stored intent, or a new one (nothing posted yet). A reference is one kind for good. */
export async function recordIntent(
  db: Queryable,
  intent: { reference: string; kind: "esim" | "topup"; item: string; iccid: string | null },
): Promise<IntentRow> {
  await db.query(
    `insert into esimgo_orders (reference, kind, item, iccid) values ($1, $2, $3, $4)
     on conflict (reference) do nothing`,
    [intent.reference, intent.kind, intent.item, intent.iccid],
  );
  const stored = await selectIntent(db, intent.reference);
  if (stored === null) throw new Error(`esimgo_orders: the intent of ${intent.reference} vanished`);
  return stored;
}

/** Another reference of the same bundle (and, for a top-up, eSIM) whose POST is unresolved. */
export type Rival = { reference: string; requested_at: Date };

export type Claim = { kind: "claimed" } | { kind: "taken" } | { kind: "rival"; rival: Rival };

/**
 * The right to send one POST for `intent`, taken under a per-bundle advisory lock so that two
 * claims of one bundle (kind, item and, for a top-up, ICCID) are decided one after the other:
 * refused while another reference of that bundle has a POST sent and unresolved (then a lookup
 * of a lost answer has only one reference of ours to serve, place-order.ts), except those in
 * `cleared` (the caller looked them up after their live call and found no order of theirs alone),
 * and only if nobody posted for this reference since we read it (`posts` as a version).
 */
export async function claimPost(
  pool: pg.Pool,
  intent: IntentRow,
  seen_posts: number,
  cleared: string[],
): Promise<Claim> {
  return inTransaction(pool, async (client) => {
    await client.query("select pg_advisory_xact_lock(hashtext($1))", [rivalryKey(intent)]);
    const rivals = await client.query<Rival>(
      `select reference, requested_at from esimgo_orders
       where kind = $1 and item = $2 and iccid is not distinct from $3 and reference <> $4
         and requested_at is not null and order_reference is null and refusal is null
         and ambiguous_at is null and reference <> all($5::text[])
       order by requested_at limit 1`,
      [intent.kind, intent.item, intent.kind === "topup" ? intent.iccid : null, intent.reference, cleared],
    );
    if (rivals.rows[0]) return { kind: "rival", rival: rivals.rows[0] };
    const claimed = await client.query(
      `update esimgo_orders set requested_at = now(), posts = posts + 1
       where reference = $1 and order_reference is null and refusal is null and posts = $2`,
      [intent.reference, seen_posts],
    );
    return claimed.rowCount === 1 ? { kind: "claimed" } : { kind: "taken" };
  });
}

function rivalryKey(intent: IntentRow): string {
  return `esimgo_orders:${intent.kind}:${intent.item}:${intent.kind === "topup" ? intent.iccid : ""}`;
}

/**
 * eSIM Go said nothing was made (401, 403, 429), or a lookup found nothing for a POST older than
 * the in-flight window: the next call may post. Only if nobody posted since `seen_posts`.
 */
export async function releaseClaim(db: Queryable, reference: string, seen_posts: number): Promise<void> {
  await db.query(
    `update esimgo_orders set requested_at = null
     where reference = $1 and order_reference is null and refusal is null and posts = $2`,
    [reference, seen_posts],
  );
}

/** eSIM Go's order for the reference (its answer or a lookup); the first one recorded stays. */
export async function recordOrder(
  db: Queryable,
  reference: string,
  order: {
    order_reference: string;
    iccid: string | null;
    smdp_address: string | null;
    matching_id: string | null;
  },
): Promise<IntentRow> {
  await db.query(
    `update esimgo_orders set order_reference = $2, iccid = coalesce(iccid, $3), smdp_address = $4,
       matching_id = $5, answered_at = now()
     where reference = $1 and order_reference is null and refusal is null`,
    [reference, order.order_reference, order.iccid, order.smdp_address, order.matching_id],
  );
  return (await selectIntent(db, reference))!;
}

/** The install details of an order recorded before they were known (an order still processing). */
export async function recordProfile(
  db: Queryable,
  reference: string,
  profile: { iccid: string; smdp_address: string; matching_id: string },
): Promise<IntentRow> {
  await db.query(
    `update esimgo_orders set iccid = $2, smdp_address = $3, matching_id = $4
     where reference = $1 and kind = 'esim' and matching_id is null`,
    [reference, profile.iccid, profile.smdp_address, profile.matching_id],
  );
  return (await selectIntent(db, reference))!;
}

export async function recordRefusal(db: Queryable, reference: string, refusal: string): Promise<void> {
  await db.query(
    `update esimgo_orders set refusal = $2, answered_at = now()
     where reference = $1 and order_reference is null and refusal is null`,
    [reference, refusal.slice(0, 500)],
  );
}

/** A lookup found several orders that could be this reference's: an operator's to match. */
export async function markAmbiguous(db: Queryable, reference: string): Promise<void> {
  await db.query(
    "update esimgo_orders set ambiguous_at = coalesce(ambiguous_at, now()) where reference = $1 and order_reference is null",
    [reference],
  );
}

export async function markCustomerRefSet(db: Queryable, reference: string): Promise<void> {
  await db.query("update esimgo_orders set customer_ref_set = true where reference = $1", [reference]);
}

/** eSIM Go order references already recorded for another reference of ours: never this one's. */
export async function attributedOrders(db: Queryable, references: string[]): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const result = await db.query<{ order_reference: string }>(
    "select order_reference from esimgo_orders where order_reference = any($1::text[])",
    [references],
  );
  return new Set(result.rows.map((row) => row.order_reference));
}

/** ICCIDs among `iccids` that are eSIMs we already hold (an order on them is a top-up, not a new eSIM). */
export async function knownIccids(db: Queryable, iccids: string[]): Promise<Set<string>> {
  if (iccids.length === 0) return new Set();
  const result = await db.query<{ iccid: string }>(
    "select distinct iccid from esimgo_orders where iccid = any($1::text[])",
    [iccids],
  );
  return new Set(result.rows.map((row) => row.iccid));
}

/** Every order of ours on one eSIM with eSIM Go's order reference, oldest first. */
export async function ordersOfEsim(db: Queryable, iccid: string): Promise<IntentRow[]> {
  const result = await db.query<IntentRow>(
    `select ${COLUMNS} from esimgo_orders where iccid = $1 and order_reference is not null
     order by (kind = 'esim') desc, answered_at, reference limit 1000`,
    [iccid],
  );
  return result.rows;
}

/** Before a revoke with refund: whether one was sent for this reference before (its answer maybe lost). */
export async function markRefundRequested(db: Queryable, reference: string): Promise<void> {
  await db.query("update esimgo_orders set refund_requested_at = now() where reference = $1", [reference]);
}

export async function recordRefund(
  db: Queryable,
  reference: string,
  outcome: { refunded: true } | { refusal: string },
): Promise<void> {
  if ("refunded" in outcome) {
    await db.query(
      `update esimgo_orders set refunded_at = now()
       where reference = $1 and refunded_at is null and refund_refusal is null`,
      [reference],
    );
  } else {
    await db.query(
      `update esimgo_orders set refund_refusal = $2
       where reference = $1 and refunded_at is null and refund_refusal is null`,
      [reference, outcome.refusal.slice(0, 500)],
    );
  }
}

/** The database's clock: the in-flight window is measured against `requested_at`, which it wrote. */
export async function databaseNow(db: Queryable): Promise<Date> {
  const result = await db.query<{ now: Date }>("select now() as now");
  return result.rows[0]!.now;
}

// SQL of the bundles a traveller notice is due for (migration 0043): marked in the caller's
// transaction, the mark and the notice it queues committing together. Private to src/esims/.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type NoticeKind = "usage_80" | "expires_24h";

export type BundleForNotice = {
  bundle_order_id: string;
  iccid: string;
  partner_id: string;
  /** The eSIM's first order: its traveller is the recipient. */
  esim_order_id: string;
  package_name: string;
  data_used_mb: number;
  data_mb: number | null;
  expires_at: Date | null;
};

// Bundles of these partners' eSIMs past the threshold and not marked yet, marked now. SKIP
// LOCKED: a concurrent sweep takes others, and re-checks a row it waited on (READ COMMITTED reads
// the committed mark), so no bundle is returned twice. The 80% test is exact in integers.
// usage_80 takes a depleted bundle too: usage can jump from under 80% to all of it between two
// sweeps, and "you have used most of your data" is still true then; only one still within its
// validity, so the notice never goes for a plan long over.
const DUE = {
  usage_80: sql`b.usage_noticed_at is null and b.data_mb is not null
                and b.data_used_mb * 5 >= b.data_mb::bigint * 4
                and (b.status = 'active' or (b.status = 'depleted' and b.expires_at > now()))`,
  expires_24h: sql`b.status = 'active' and b.expiry_noticed_at is null and b.expires_at > now()
                   and b.expires_at <= now() + interval '24 hours'`,
} as const;

const MARK = {
  usage_80: sql`usage_noticed_at = now()`,
  expires_24h: sql`expiry_noticed_at = now()`,
} as const;

export async function markBundlesDue(
  db: Executor,
  kind: NoticeKind,
  partner_ids: readonly string[],
  limit: number,
): Promise<BundleForNotice[]> {
  if (partner_ids.length === 0) return [];
  const result = await sql<BundleForNotice>`
    with due as (
      select b.order_id, b.iccid from esim_bundles b
      join esims e on e.iccid = b.iccid
      where e.partner_id = any(${partner_ids}::text[]) and ${DUE[kind]}
      order by b.order_id
      limit ${limit}
      for update of b skip locked
    )
    update esim_bundles b set ${MARK[kind]}
    from due, esims e
    where b.order_id = due.order_id and b.iccid = due.iccid and e.iccid = b.iccid
    returning b.order_id as bundle_order_id, b.iccid, e.partner_id, e.order_id as esim_order_id,
              b.name as package_name, b.data_used_mb::float8 as data_used_mb, b.data_mb, b.expires_at`.execute(
    db,
  );
  return result.rows;
}

// The bundles whose traveller notice (notifications/queue-traveller-notices.ts) is due: 80% of
// their data used, or 24 hours or less before they expire. Each bundle is returned once per kind,
// ever: the mark is set in the caller's transaction, which queues the notice with it.
import type { Transaction } from "kysely";
import type { Database } from "../db/schema.ts";
import { type BundleForNotice, markBundlesDue, type NoticeKind } from "./notice-bundles.sql.ts";

export type { BundleForNotice, NoticeKind };

export function markBundlesForNotice(
  trx: Transaction<Database>,
  kind: NoticeKind,
  partner_ids: readonly string[],
  limit: number,
): Promise<BundleForNotice[]> {
  return markBundlesDue(trx, kind, partner_ids, limit);
}

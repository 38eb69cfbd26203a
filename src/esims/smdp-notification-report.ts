// For support: what the SM-DP+ reported of one ICCID (eligibility and confirmation failures,
// downloads that never installed), newest first.
import type { Executor } from "../db/executor.ts";
import { listNotifications, type SmdpNotificationRow } from "./smdp-notifications.sql.ts";

export type { SmdpNotificationRow };

export function smdpNotificationsOf(
  db: Executor,
  iccid: string,
  limit: number,
): Promise<SmdpNotificationRow[]> {
  return listNotifications(db, iccid, limit);
}

// HandleDownloadProgressInfo notifications as received (migration 0010), for support and dedup.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type SmdpNotificationRow = {
  iccid: string;
  notification_point_id: number;
  status: string;
  subject_code: string | null;
  reason_code: string | null;
  message: string | null;
  occurred_at: Date;
};

export async function notificationSeen(
  db: Executor,
  row: Pick<SmdpNotificationRow, "iccid" | "notification_point_id" | "status" | "occurred_at">,
): Promise<boolean> {
  const result = await sql<{ one: number }>`
    select 1 as one from smdp_notifications
    where iccid = ${row.iccid} and notification_point_id = ${row.notification_point_id}
      and status = ${row.status} and occurred_at = ${row.occurred_at}`.execute(db);
  return result.rows.length > 0;
}

export async function insertNotification(db: Executor, row: SmdpNotificationRow): Promise<void> {
  await sql`
    insert into smdp_notifications
      (iccid, notification_point_id, status, subject_code, reason_code, message, occurred_at)
    values (${row.iccid}, ${row.notification_point_id}, ${row.status}, ${row.subject_code},
            ${row.reason_code}, ${row.message}, ${row.occurred_at})
    on conflict (iccid, notification_point_id, status, occurred_at) do nothing`.execute(db);
}

export async function listNotifications(
  db: Executor,
  iccid: string,
  limit: number,
): Promise<SmdpNotificationRow[]> {
  const result = await sql<SmdpNotificationRow>`
    select iccid, notification_point_id, status, subject_code, reason_code, message, occurred_at
    from smdp_notifications where iccid = ${iccid} order by id desc limit ${limit}`.execute(db);
  return result.rows;
}

// The SM-DP+'s HandleDownloadProgressInfo (SGP.22 5.3.5), turned into our eSIM lifecycle: point 4
// (installation) Executed-Success is the profile installed, point 5 (deletion) the profile
// deleted, both applied through apply-signal.ts like every carrier signal (forward only, a late or
// repeated one changes nothing). Point 3 (download) and every Failed or Expired point (eligibility,
// confirmation, download, installation) are recorded for support (smdp_notifications), and so is
// every notification: a repeat of one already recorded is ignored.
import { Type } from "typebox";
import { Value } from "typebox/value";
import type { EsimSignal } from "../carrier/carrier.ts";
import { normalizeIccid } from "../carrier/es2plus/messages.ts";
import type { AppContext } from "../shared/context.ts";
import { applySignal } from "./apply-signal.ts";
import { insertNotification, notificationSeen, type SmdpNotificationRow } from "./smdp-notifications.sql.ts";

const Code = Type.String({ minLength: 1, maxLength: 16 });

export const DownloadProgressInfo = Type.Object({
  header: Type.Object({
    functionRequesterIdentifier: Type.String({ minLength: 1, maxLength: 128 }),
    functionCallIdentifier: Type.String({ minLength: 1, maxLength: 128 }),
  }),
  eid: Type.Optional(Type.String({ pattern: "^[0-9]{32}$" })),
  iccid: Type.String({ pattern: "^[0-9]{19,20}$|^[0-9]{19}[Ff]$" }),
  profileType: Type.String({ minLength: 1, maxLength: 64 }),
  timestamp: Type.String({ minLength: 10, maxLength: 40 }),
  notificationPointId: Type.Integer({ minimum: 1, maximum: 5 }),
  notificationPointStatus: Type.Object({
    status: Type.Union([
      Type.Literal("Executed-Success"),
      Type.Literal("Executed-WithWarning"),
      Type.Literal("Failed"),
      Type.Literal("Expired"),
    ]),
    statusCodeData: Type.Optional(
      Type.Object({
        subjectCode: Code,
        reasonCode: Code,
        message: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
    ),
  }),
  resultData: Type.Optional(Type.String({ maxLength: 20_000 })),
});

export type ProgressOutcome = "invalid" | "duplicate" | "recorded" | "applied";

export async function receiveDownloadProgress(ctx: AppContext, body: unknown): Promise<ProgressOutcome> {
  const row = readNotification(body);
  if (row === null) return "invalid";
  if (await notificationSeen(ctx.db, row)) return "duplicate";
  const signal = lifecycleSignal(row);
  // Applied before it is recorded: a crash in between makes the re-sent one apply (harmlessly) again.
  if (signal !== null) await applySignal(ctx, signal, "callback");
  await insertNotification(ctx.db, row);
  return signal === null ? "recorded" : "applied";
}

function readNotification(body: unknown): SmdpNotificationRow | null {
  if (!Value.Check(DownloadProgressInfo, body)) return null;
  const iccid = normalizeIccid(body.iccid);
  const occurred_at = new Date(body.timestamp);
  if (iccid === null || Number.isNaN(occurred_at.getTime())) return null;
  const status = body.notificationPointStatus;
  return {
    iccid,
    notification_point_id: body.notificationPointId,
    status: status.status,
    subject_code: status.statusCodeData?.subjectCode ?? null,
    reason_code: status.statusCodeData?.reasonCode ?? null,
    message: status.statusCodeData?.message?.slice(0, 500) ?? null,
    occurred_at,
  };
}

function lifecycleSignal(row: SmdpNotificationRow): EsimSignal | null {
  const succeeded = row.status === "Executed-Success" || row.status === "Executed-WithWarning";
  if (!succeeded || (row.notification_point_id !== 4 && row.notification_point_id !== 5)) return null;
  const at = row.occurred_at.toISOString();
  const installed = row.notification_point_id === 4;
  return {
    iccid: row.iccid,
    as_of: at,
    profile: {
      state: installed ? "installed" : "deleted",
      installed_at: installed ? at : null,
      deleted_at: installed ? null : at,
    },
    // The SM-DP+ knows profiles, not bundles: the bundle system reports those.
    bundles: [],
  };
}

// Webhook opt-in and the low-data notification: POST/GET /v2/notifications/opt-in, POST
// /v2/notifications/opt-out ([SPEC notifications-notification-async-orders],
// [DOC:low-data-notification-opt-in-11883039e0], [DOC:low-data-notification-opt-out-11883040e0]),
// and POST /v2/simulator/webhook ([DOC:webhook-simulator-11883044e0]).

import { deleteNotification, selectNotifications, selectSim, upsertNotification } from "./airalo.sql.ts";
import { type Answer, invalid, notFound, ok } from "./answers.ts";
import { type Fields, text } from "./bodies.ts";
import type { Context } from "./context.ts";

const WEBHOOK_TYPES = ["async_orders", "webhook_low_data", "webhook_credit_limit"];
const PROBE_TIMEOUT_MS = 5_000;

/** "the webhook_url parameter is checked by the system via a HEAD request. Your endpoint must respond with 200 OK". */
async function probe(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return response.status === 200;
  } catch {
    return false;
  }
}

export async function optIn(context: Context, fields: Fields): Promise<Answer> {
  const type = text(fields, "type");
  const url = text(fields, "webhook_url");
  const errors: Record<string, string> = {};
  // The e-mail variants exist on Airalo but send no webhook: out of the fake's scope.
  if (type === null || !WEBHOOK_TYPES.includes(type)) errors.type = "The selected type is invalid.";
  if (url === null || !/^https?:\/\/\S+$/.test(url))
    errors.webhook_url = "The webhook url format is invalid.";
  if (Object.keys(errors).length > 0) return invalid(errors);
  // UNCONFIRMED wording: the docs say only that the HEAD probe must answer 200.
  if (!(await probe(url!)))
    return invalid({ webhook_url: "The webhook url must respond to a HEAD request with 200 OK." });
  const levels = Array.isArray(fields.levels) ? fields.levels.map(Number).filter(Number.isInteger) : null;
  await upsertNotification(context.pool, type!, url!, levels);
  const notification: Record<string, unknown> = { type, contact_point: url };
  if (levels) notification.levels = levels;
  return ok({ notification });
}

export async function optOut(context: Context, fields: Fields): Promise<Answer> {
  const type = text(fields, "type");
  if (type === null || !WEBHOOK_TYPES.includes(type))
    return invalid({ type: "The selected type is invalid." });
  await deleteNotification(context.pool, type);
  return ok({ notification: { type } });
}

export async function readOptIns(context: Context): Promise<Answer> {
  const rows = await selectNotifications(context.pool);
  return ok(
    rows.map((row) => ({ type: row.type, contact_point: row.webhook_url, levels: row.levels ?? undefined })),
  );
}

/** The opted-in URL for `type`, else the fake's configured default (AIRALO_SIM_WEBHOOK_URL). */
export async function webhookUrl(
  context: Context,
  type: string,
  fallback: string | null,
): Promise<string | null> {
  const rows = await selectNotifications(context.pool);
  return rows.find((row) => row.type === type)?.webhook_url ?? fallback;
}

/** simulator `type` to the delivered `level` ("1days", "3days", "75%", "90%"); only expire_1 is documented. */
const LEVELS: Record<string, string> = {
  expire_1: "1days",
  expire_3: "3days",
  data_75: "75%",
  data_90: "90%",
};

export async function sendLowData(
  context: Context,
  iccid: string,
  level: string,
  remaining_percentage: number,
  fallback: string | null,
): Promise<boolean> {
  const sim = await selectSim(context.pool, iccid);
  const url = await webhookUrl(context, "webhook_low_data", fallback);
  if (!sim || url === null) return false;
  context.webhooks.send("webhook_low_data", url, {
    level,
    package_name: sim.package_id,
    remaining_percentage,
    iccid,
  });
  return true;
}

export async function simulateWebhook(
  context: Context,
  fields: Fields,
  fallback: string | null,
): Promise<Answer> {
  const type = text(fields, "type");
  const iccid = text(fields, "iccid");
  const errors: Record<string, string> = {};
  if (text(fields, "event") !== "low_data_notification") errors.event = "The selected event is invalid.";
  if (type === null || !(type in LEVELS)) errors.type = "The selected type is invalid.";
  if (iccid === null) errors.iccid = "The iccid field is required.";
  if (Object.keys(errors).length > 0) return invalid(errors);
  const level = LEVELS[type!]!;
  const remaining = level.endsWith("%") ? 100 - Number(level.slice(0, -1)) : 50;
  if (!(await sendLowData(context, iccid!, level, remaining, fallback))) return notFound();
  return { status: 200, body: { success: "Notification sent" } };
}

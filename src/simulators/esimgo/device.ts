// What a device does to an eSIM, driven through the sandbox control routes: install the profile,
// use data, let its bundles run out. Data use follows [DOC:guides/bundle_status/]: the first use
// starts the oldest queued bundle (its duration runs from then); a bundle whose data is used up is
// `depleted` and the next queued one takes the rest. Each change yields the V3 callbacks the
// notifications pages describe: FirstUse once per eSIM, Utilisation at 1%, 50%, 80% and 100% used.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";
import { type Answer, type CallbackEvent, type FakeContext, failure } from "./answers.ts";
import {
  type AssignmentRow,
  endAssignmentsNow,
  expireRunning,
  lockEsims,
  markFirstUse,
  markInstalled,
  selectAssignments,
  startAssignment,
  useFromAssignment,
} from "./esims.sql.ts";
import { esimBundles } from "./esims.ts";
import { MESSAGES, REFUND_PERIOD_DAYS } from "./unconfirmed.ts";

/** [DOC:api/notifications/operations/utilisation]: "1%, 50%, 80%, 100%". */
const UTILISATION_PERCENTS = [1, 50, 80, 100];

export type DeviceEvent = { event: "install" | "use_data" | "expire"; bytes?: number };

export async function deviceEvent(context: FakeContext, iccid: string, change: DeviceEvent): Promise<Answer> {
  const events: CallbackEvent[] = [];
  const found = await inTransaction(context.pool, async (client) => {
    const [esim] = await lockEsims(client, [iccid]);
    if (!esim) return false;
    await expireRunning(client, iccid);
    if (change.event === "install") await markInstalled(client, iccid);
    if (change.event === "expire") await endAssignmentsNow(client, iccid);
    if (change.event === "use_data" && (change.bytes ?? 0) > 0) {
      events.push(...(await useData(client, iccid, change.bytes!, esim.first_used_at === null)));
    }
    return true;
  });
  if (!found) return failure(400, MESSAGES.unknown_iccid(iccid));
  context.notify(events);
  return esimBundles(context.pool, iccid, { includeUsed: true, limit: 200 });
}

async function useData(
  client: pg.PoolClient,
  iccid: string,
  bytes: number,
  firstUse: boolean,
): Promise<CallbackEvent[]> {
  // A device using data has the profile installed.
  await markInstalled(client, iccid);
  if (firstUse) await markFirstUse(client, iccid);
  const rows = await selectAssignments(client, iccid, REFUND_PERIOD_DAYS);
  const events: CallbackEvent[] = [];
  let left = bytes;
  for (const row of rows) {
    if (left <= 0) break;
    if (row.state !== "active" && row.state !== "queued") continue;
    if (row.state === "queued") await startAssignment(client, row.id);
    const started = row.state === "queued" ? { ...row, started_at: new Date(), ends_at: endsAt(row) } : row;
    const used = Math.min(left, row.remaining_bytes);
    left -= used;
    const after = { ...started, remaining_bytes: row.remaining_bytes - used };
    const crossed = UTILISATION_PERCENTS.filter(
      (percent) => !row.alerted_percents.includes(percent) && usedPercent(after) >= percent,
    );
    await useFromAssignment(client, { ...after, alerted_percents: [...row.alerted_percents, ...crossed] });
    if (firstUse && events.length === 0) events.push(callbackEvent(iccid, "FirstUse", after));
    // One Utilisation callback per change, for the highest threshold crossed.
    if (crossed.length > 0) events.push(callbackEvent(iccid, "Utilisation", after));
  }
  return events;
}

function endsAt(row: AssignmentRow): Date {
  return new Date(Date.now() + row.duration_days * 86_400_000);
}

function usedPercent(row: { initial_bytes: number; remaining_bytes: number }): number {
  return ((row.initial_bytes - row.remaining_bytes) / row.initial_bytes) * 100;
}

/** The V3 body ([DOC:api/v2_4/operations/your-usage-callback-url/post]); quantities in bytes. */
function callbackEvent(
  iccid: string,
  alertType: CallbackEvent["alertType"],
  row: Pick<
    AssignmentRow,
    | "id"
    | "reference"
    | "bundle_name"
    | "description"
    | "initial_bytes"
    | "remaining_bytes"
    | "started_at"
    | "ends_at"
  >,
): CallbackEvent {
  return {
    iccid,
    alertType,
    bundle: {
      id: row.id,
      reference: row.reference,
      name: row.bundle_name,
      description: row.description,
      initialQuantity: row.initial_bytes,
      remainingQuantity: row.remaining_bytes,
      startTime: row.started_at?.toISOString() ?? null,
      endTime: row.ends_at?.toISOString() ?? null,
      unlimited: false,
    },
  };
}

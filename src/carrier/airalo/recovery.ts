// Finding out what Airalo did with a reference whose POST may have reached it (its answer lost to a
// timeout, a cut connection, a 5xx, a crash), without asking it to do anything. Airalo has no
// idempotency key and no lookup by client reference; its order list filters `description` by
// substring (docs/suppliers/airalo.md §6), and our reference travels in the description
// (config.ts `descriptionFor`), so:
//
// - an eSIM: GET /v2/orders?filter[description]=<tag>&include=sims,status, and the order whose
//   description carries exactly our reference (LIKE's `_` and `%` match more than we asked for);
// - a top-up: the same first. But the docs' top-up answers show `"description": "Topup (<iccid>)"`
//   although a description was sent (§4, UNCONFIRMED whether Airalo keeps ours). So when no order
//   carries our tag, the eSIM's orders are read (filter[iccid], created since our intent) and a
//   top-up of our package that carries no tag of ours and that no other reference of ours recorded
//   is ours, if it is the only such order and ours the only unanswered top-up of that package on
//   that eSIM. Anything else is ambiguous and stays "unknown" (an operator settles it).
//   No candidate at all proves nothing by itself: the docs' filter[iccid] searches "%SIM_ICCID%"
//   and a top-up order has no `sims` (§4, §6), so Airalo's list may not show top-ups by eSIM at
//   all. "absent" (safe to post again) then needs the eSIM's package history (GET
//   /v2/sims/{iccid}/packages, [DOC:get-esim-package-history-11883032e0]) to hold no more entries
//   of our package than the top-ups of it Airalo answered us; any more, or no readable history,
//   stays "unknown".
//   Residual risk: a top-up of the same package on the same eSIM made outside this service (the
//   Airalo console, another integration) in the same window, while our own answer was lost, would
//   be taken for ours (we would then not charge for one we may have failed to make).

import type { IntentRow } from "./airalo.sql.ts";
import type { AiraloClient } from "./client.ts";
import { LOOKUP_LIMIT, referenceIn, referenceTag } from "./config.ts";
import { type AiraloOrder, airaloInstant, parseOrderList, parsePackageHistory } from "./shapes.ts";

export type Recovered =
  | { kind: "found"; order: AiraloOrder }
  | { kind: "absent" }
  | { kind: "unknown"; reason: string };

/** Slack for the clocks of Airalo and our database when comparing an order's time with our intent's. */
const CLOCK_SLACK_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

/** What our own table says, asked by a recovery (airalo.sql.ts). */
export type OurRecords = {
  /** Airalo order ids recorded for another reference of ours. */
  claimedElsewhere: (ids: string[]) => Promise<Set<string>>;
  /** Our unanswered top-ups of the intent's package on its eSIM. */
  unansweredTopUps: () => Promise<string[]>;
  /** How many top-ups of the intent's package on its eSIM Airalo answered us. */
  answeredTopUps: () => Promise<number>;
};

export async function findOrder(
  client: AiraloClient,
  intent: IntentRow,
  ours: OurRecords,
): Promise<Recovered> {
  const tagged = await ordersTagged(client, intent.reference);
  if (tagged.kind !== "orders") return tagged;
  const mine = tagged.orders.filter(
    (order) => referenceIn(order.description) === intent.reference && order.type === intent.kind,
  );
  // Two orders for one reference would be this adapter's failure: the oldest is the one kept, and
  // the other is still visible at Airalo for an operator (no second charge is made for it).
  mine.sort((a, b) => Number(a.id) - Number(b.id));
  if (mine.length > 0) return { kind: "found", order: mine[0]! };
  if (intent.kind === "sim") return { kind: "absent" };
  return findUntaggedTopUp(client, intent, ours);
}

async function ordersTagged(
  client: AiraloClient,
  reference: string,
): Promise<{ kind: "orders"; orders: AiraloOrder[] } | { kind: "unknown"; reason: string }> {
  const verdict = await client.call("/orders", {
    query: {
      "filter[description]": referenceTag(reference),
      include: "sims,status",
      limit: String(LOOKUP_LIMIT),
    },
  });
  return listed(verdict, "orders described with our reference");
}

function listed(
  verdict: Awaited<ReturnType<AiraloClient["call"]>>,
  what: string,
): { kind: "orders"; orders: AiraloOrder[] } | { kind: "unknown"; reason: string } {
  if (verdict.kind !== "ok") {
    const reason = "reason" in verdict ? verdict.reason : "Airalo answered 404";
    return { kind: "unknown", reason: `looking up ${what}: ${reason}` };
  }
  const list = parseOrderList(verdict.body);
  if (list === null) return { kind: "unknown", reason: `looking up ${what}: a malformed order list` };
  // More than a page: not what one reference or one eSIM's window can hold; not read further.
  if (list.last_page > 1)
    return { kind: "unknown", reason: `looking up ${what}: more than ${LOOKUP_LIMIT} orders` };
  return { kind: "orders", orders: list.orders };
}

async function findUntaggedTopUp(
  client: AiraloClient,
  intent: IntentRow,
  ours: OurRecords,
): Promise<Recovered> {
  const iccid = intent.iccid!;
  const since_ms = intent.created_at.getTime() - CLOCK_SLACK_MS;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const verdict = await client.call("/orders", {
    query: {
      "filter[iccid]": iccid,
      "filter[created_at]": `${day(since_ms)} - ${day(Date.now() + DAY_MS)}`,
      include: "status",
      limit: String(LOOKUP_LIMIT),
    },
  });
  const read = listed(verdict, `top-ups of ${iccid}`);
  if (read.kind !== "orders") return read;
  const untagged = read.orders.filter((order) => {
    const at = airaloInstant(order.created_at);
    return (
      order.type === "topup" &&
      order.package_id === intent.package_id &&
      referenceIn(order.description) === null &&
      at !== null &&
      Date.parse(at) >= since_ms
    );
  });
  const claimed = await ours.claimedElsewhere(untagged.map((order) => order.id));
  const candidates = untagged.filter((order) => !claimed.has(order.id));
  if (candidates.length === 0) return absentByHistory(client, intent, ours);
  const rivals = await ours.unansweredTopUps();
  if (candidates.length === 1 && rivals.length === 1 && rivals[0] === intent.reference) {
    return { kind: "found", order: candidates[0]! };
  }
  return {
    kind: "unknown",
    reason:
      `top-up ${intent.reference}: ${candidates.length} untagged top-up(s) of ${intent.package_id} on ${iccid} ` +
      `and ${rivals.length} unanswered top-up(s) of ours: an operator must match them (Airalo orders ` +
      `${candidates.map((order) => order.id).join(", ")})`,
  };
}

/** "absent" only when the eSIM's package history accounts for every top-up of our package. */
async function absentByHistory(
  client: AiraloClient,
  intent: IntentRow,
  ours: OurRecords,
): Promise<Recovered> {
  const iccid = intent.iccid!;
  const verdict = await client.call(`/sims/${encodeURIComponent(iccid)}/packages`, {
    limits: [["sim_packages", iccid]],
  });
  const what = `top-up ${intent.reference}: no order of it found, and the package history of ${iccid}`;
  if (verdict.kind !== "ok") {
    const reason = verdict.kind === "not_found" ? "Airalo answered 404" : verdict.reason;
    return { kind: "unknown", reason: `${what} could not be read (${reason})` };
  }
  const history = parsePackageHistory(verdict.body);
  if (history === null) return { kind: "unknown", reason: `${what} is malformed` };
  const made = history.filter((id) => id === intent.package_id).length;
  const answered = await ours.answeredTopUps();
  if (made <= answered) return { kind: "absent" };
  return {
    kind: "unknown",
    reason:
      `${what} holds ${made} top-up(s) of ${intent.package_id} and Airalo answered us ${answered}: ` +
      "one may be ours; an operator must match them",
  };
}

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
//   Residual risk: a top-up of the same package on the same eSIM made outside this service (the
//   Airalo console, another integration) in the same window, while our own answer was lost, would
//   be taken for ours (we would then not charge for one we may have failed to make).

import type { IntentRow } from "./airalo.sql.ts";
import type { AiraloClient } from "./client.ts";
import { LOOKUP_LIMIT, referenceIn, referenceTag } from "./config.ts";
import { type AiraloOrder, airaloInstant, parseOrderList } from "./shapes.ts";

export type Recovered =
  | { kind: "found"; order: AiraloOrder }
  | { kind: "absent" }
  | { kind: "unknown"; reason: string };

/** Slack for the clocks of Airalo and our database when comparing an order's time with our intent's. */
const CLOCK_SLACK_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

export async function findOrder(
  client: AiraloClient,
  intent: IntentRow,
  claimedElsewhere: (ids: string[]) => Promise<Set<string>>,
  unansweredTopUps: () => Promise<string[]>,
): Promise<Recovered> {
  const tagged = await ordersTagged(client, intent.reference);
  if (tagged.kind !== "orders") return tagged;
  const ours = tagged.orders.filter(
    (order) => referenceIn(order.description) === intent.reference && order.type === intent.kind,
  );
  // Two orders for one reference would be this adapter's failure: the oldest is the one kept, and
  // the other is still visible at Airalo for an operator (no second charge is made for it).
  ours.sort((a, b) => Number(a.id) - Number(b.id));
  if (ours.length > 0) return { kind: "found", order: ours[0]! };
  if (intent.kind === "sim") return { kind: "absent" };
  return findUntaggedTopUp(client, intent, claimedElsewhere, unansweredTopUps);
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
  claimedElsewhere: (ids: string[]) => Promise<Set<string>>,
  unansweredTopUps: () => Promise<string[]>,
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
  const claimed = await claimedElsewhere(untagged.map((order) => order.id));
  const candidates = untagged.filter((order) => !claimed.has(order.id));
  if (candidates.length === 0) return { kind: "absent" };
  const rivals = await unansweredTopUps();
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

// Finding out what eSIM Go did with a reference whose POST /orders may have reached it (its answer
// lost to a timeout, a cut connection, a 5xx, a crash), without asking it to do anything. eSIM Go
// has no idempotency key and no client reference on an order (docs/suppliers/esimgo.md §6), so:
//
// 1. an eSIM: GET /esims?filterBy=customerRef&filter=eq:<reference> first. We set customerRef once
//    an order's eSIM is known (place-order.ts), so an eSIM carrying our reference is ours exactly;
// 2. otherwise the orders eSIM Go made in our window, GET /orders?createdAt=gte:<intent - slack>
//    &createdAt=lte:<last POST + in-flight window + slack>, and of those the candidates: one line,
//    our bundle (`item`, case-sensitive), quantity 1, not a failed order, not already recorded for
//    another reference of ours (order_reference is unique in esimgo_orders), and
//      - an eSIM: its line's ICCID is not an eSIM we already hold (that would be a top-up);
//      - a top-up: its line's ICCIDs are exactly [our eSIM] (allowReassign false: never a new one).
//    Exactly one candidate is ours. None: absent. More: unknown, for an operator.
//    The window is checked on our side too (an order's `createDate` outside it is not ours: the
//    filter's exact semantics are not confirmed), and the list is read page by page until an
//    empty page (eSIM Go's page size is not documented: a page shorter than we asked for may
//    still not be the last), at most MAX_ORDER_PAGES pages, else unknown.
//    An eSIM candidate must also be a new eSIM, not a top-up (a POST /orders with `iccids` looks
//    the same in the list): a line whose `type` is not "bundle" is not a purchase, and its eSIM's
//    bundles (GET /esims/{iccid}/bundles?includeUsed=true) must hold only this one assignment; an
//    eSIM with more had a bundle before this order (a top-up made outside, of the same bundle).
//
// Why one candidate can be trusted: a claim to POST (esimgo.sql.ts claimPost) waits while another
// reference of the same bundle (and eSIM, for a top-up) has a POST unresolved, until that one's
// answer is found or its lookup shows it absent after its live call. So every other order of ours
// for the bundle in the window was answered (recorded, excluded), said "not made", or is a POST
// that landed after its lookup found nothing: then two orders are unattributed and the answer is
// unknown (an operator matches them), never a guess and never a second POST. The total is not
// matched: we do not know the price before the answer (a validate call would give it, but a price
// is no better a fingerprint than the bundle name, and it costs a rate-limited call per POST).
// Residual risk: an order of the same bundle made outside this service (the portal, another
// integration on the same account) in the window of a lost answer would be taken for ours when our
// own POST never landed (the customerRef we then set marks it ours).

import { type EsimGoClient, isObject, reasonOf } from "./client.ts";
import { CLOCK_SLACK_MS, MAX_ORDER_PAGES, ORDER_PAGE_LIMIT } from "./config.ts";
import type { IntentRow } from "./esimgo.sql.ts";
import { type EsimGoOrder, parseAssignments, parseOrderList } from "./shapes.ts";

export type Recovered =
  | { kind: "found"; order: EsimGoOrder }
  | { kind: "absent" }
  /** Several orders could be ours: an operator's to match. */
  | { kind: "ambiguous"; reason: string }
  | { kind: "unknown"; reason: string };

/** Candidates checked for being a new eSIM; more than that is an operator's to match anyway. */
const MAX_FRESHNESS_CHECKS = 3;
/** The most calls one lookup makes: the customerRef filter, the order pages, the freshness checks. */
export const MAX_LOOKUP_CALLS = 1 + MAX_ORDER_PAGES + MAX_FRESHNESS_CHECKS;

export type RecoveryDeps = {
  client: EsimGoClient;
  in_flight_ms: number;
  attributedElsewhere: (order_references: string[]) => Promise<Set<string>>;
  knownIccids: (iccids: string[]) => Promise<Set<string>>;
};

export async function findOrder(deps: RecoveryDeps, intent: IntentRow): Promise<Recovered> {
  const tagged = intent.kind === "esim" ? await esimTagged(deps.client, intent.reference) : null;
  const listed = await ordersInWindow(deps, intent);
  if (listed.kind !== "orders") return listed;
  if (tagged !== null) {
    const order = listed.orders.find((one) => one.lines.some((line) => line.iccids.includes(tagged)));
    if (order) return { kind: "found", order };
  }
  const shaped = listed.orders.filter((order) => fits(order, intent));
  const attributed = await deps.attributedElsewhere(shaped.map((order) => order.reference));
  let candidates = shaped.filter((order) => !attributed.has(order.reference));
  if (intent.kind === "esim") {
    const held = await deps.knownIccids(candidates.flatMap((order) => order.lines[0]!.iccids));
    candidates = candidates.filter((order) => !order.lines[0]!.iccids.some((iccid) => held.has(iccid)));
    const fresh = await newEsimsOnly(deps.client, candidates);
    if (fresh.kind !== "orders") return fresh;
    candidates = fresh.orders;
  }
  if (candidates.length === 0) return { kind: "absent" };
  if (candidates.length === 1) return { kind: "found", order: candidates[0]! };
  return {
    kind: "ambiguous",
    reason:
      `${candidates.length} eSIM Go orders of ${intent.item} in the window of ${intent.reference} are ` +
      `nobody's of ours (${candidates.map((order) => order.reference).join(", ")}): an operator must match them`,
  };
}

/** One line of our bundle, quantity 1; a top-up's on exactly our eSIM. */
function fits(order: EsimGoOrder, intent: IntentRow): boolean {
  if (order.lines.length !== 1 || order.status === "failed") return false;
  const line = order.lines[0]!;
  if (line.item !== intent.item || line.quantity !== 1) return false;
  if (line.type !== null && line.type !== "bundle") return false;
  if (intent.kind === "topup") return line.iccids.length === 1 && line.iccids[0] === intent.iccid;
  return line.iccids.length <= 1;
}

/**
 * The ICCID of an eSIM carrying our reference as customerRef, or null: none, or the filter not
 * answered (the window match below is safe on its own; the tag only makes it exact).
 */
async function esimTagged(client: EsimGoClient, reference: string): Promise<string | null> {
  const verdict = await client.call("/esims", {
    query: { filterBy: "customerRef", filter: `eq:${reference}`, perPage: "5" },
  });
  if (verdict.kind !== "ok") return null;
  const esims = isObject(verdict.body) && Array.isArray(verdict.body.esims) ? verdict.body.esims : [];
  const ours = esims.find((esim) => isObject(esim) && esim.customerRef === reference);
  return isObject(ours) && typeof ours.iccid === "string" ? ours.iccid : null;
}

async function ordersInWindow(
  deps: RecoveryDeps,
  intent: IntentRow,
): Promise<{ kind: "orders"; orders: EsimGoOrder[] } | { kind: "unknown"; reason: string }> {
  const from = new Date(intent.created_at.getTime() - CLOCK_SLACK_MS).toISOString();
  const last_post_ms = (intent.requested_at ?? intent.created_at).getTime();
  const to = new Date(last_post_ms + deps.in_flight_ms + CLOCK_SLACK_MS).toISOString();
  const [from_ms, to_ms] = [Date.parse(from), Date.parse(to)];
  const orders: EsimGoOrder[] = [];
  for (let page = 1; page <= MAX_ORDER_PAGES; page++) {
    const verdict = await deps.client.call("/orders", {
      query: {
        createdAt: [`gte:${from}`, `lte:${to}`],
        includeIccids: "true",
        limit: String(ORDER_PAGE_LIMIT),
        page: String(page),
      },
    });
    if (verdict.kind !== "ok") return { kind: "unknown", reason: `listing orders: ${reasonOf(verdict)}` };
    const list = parseOrderList(verdict.body);
    if (list === null) return { kind: "unknown", reason: "listing orders: a malformed order list" };
    if (list.length === 0) return { kind: "orders", orders };
    // An order without a readable time stays a candidate: leaving it out could only say "absent".
    orders.push(
      ...list.filter(
        (order) => order.created_ms === null || (order.created_ms >= from_ms && order.created_ms <= to_ms),
      ),
    );
  }
  return {
    kind: "unknown",
    reason:
      `listing orders: still more after ${MAX_ORDER_PAGES} pages in the window of ${intent.reference}; ` +
      "an operator must look it up",
  };
}

/** The candidates whose eSIM holds only their own bundle (a new eSIM), read at eSIM Go. */
async function newEsimsOnly(
  client: EsimGoClient,
  candidates: EsimGoOrder[],
): Promise<{ kind: "orders"; orders: EsimGoOrder[] } | { kind: "unknown"; reason: string }> {
  if (candidates.length > MAX_FRESHNESS_CHECKS) return { kind: "orders", orders: candidates };
  const fresh: EsimGoOrder[] = [];
  for (const order of candidates) {
    const iccid = order.lines[0]!.iccids[0];
    if (iccid === undefined) {
      fresh.push(order); // no eSIM named yet: nothing proves it is a top-up
      continue;
    }
    const verdict = await client.call(`/esims/${encodeURIComponent(iccid)}/bundles`, {
      query: { includeUsed: "true", limit: "200" },
    });
    if (verdict.kind !== "ok") {
      return { kind: "unknown", reason: `reading the bundles of ${iccid}: ${reasonOf(verdict)}` };
    }
    const assignments = parseAssignments(verdict.body);
    if (assignments === null)
      return { kind: "unknown", reason: `eSIM Go answered malformed bundles of ${iccid}` };
    if (assignments.length <= 1) fresh.push(order);
  }
  return { kind: "orders", orders: fresh };
}

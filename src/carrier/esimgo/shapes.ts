// The eSIM Go shapes this adapter reads and sends, each with its section of
// docs/suppliers/esimgo.md (which gives the primary sources: [DOC:...] pages of docs.esim-go.com,
// [GO] a third-party Go client, [3P-OAS] a third party's OpenAPI). Parsers read only the fields
// they need and accept the spellings the docs disagree on.
//
// | We send                                              | eSIM Go answers (what we read)                          | Doc §  |
// |------------------------------------------------------|---------------------------------------------------------|--------|
// | any call: header X-API-Key, Accept: application/json | errors {message}: 400, 401, 403, 410, 429, 5xx          | §1, §7 |
// | POST /orders {type: "transaction", assign: true,     | 200 {orderReference, status, total, currency,           | §3     |
// |   order: [{type: "bundle", quantity: 1, item,        |   createdDate, order: [{item, quantity,                  |        |
// |   allowReassign: false}]}                            |   esims: [{iccid, matchingId, smdpAddress}], iccids}]}  |        |
// | the same with iccids: [<iccid>] (a top-up)           | the same; iccids = the eSIM topped up                   | §3, §4 |
// | GET /orders?createdAt=gte:<t>&createdAt=lte:<t>      | a bare array (or {orders: [...]}, [3P-OAS]) of order     | §6     |
// |   &limit=200&page=n&includeIccids=true               |   objects, `createDate` (or `createdDate`: both read)    |        |
// | GET /esims/assignments?reference=<orderReference>    | {iccid, matchingId, smdpAddress, ...} (an array for     | §3     |
// |   (Accept: application/json; CSV by default)         |   several, UNCONFIRMED); 503 while processing; 410      |        |
// | PUT /esims {iccid, customerRef: <our reference>}     | {status: "success"}; the method and body are the fake's  | §6     |
// |                                                      |   reading of [DOC:api/v2_4/operations/esims/put]         |        |
// | GET /esims?filterBy=customerRef&filter=eq:<ref>      | {esims: [{iccid, customerRef, ...}]}                    | §6     |
// | GET /esims/{iccid}                                   | {iccid, matchingId, smdpAddress, profileStatus:          | §3     |
// |                                                      |   Released|Downloaded|Installed|Unavailable,             |        |
// |                                                      |   firstInstalledDateTime (ISO or ms)}; unknown: 400      |        |
// | GET /esims/{iccid}/bundles?includeUsed=true&limit=200| {bundles: [{name, assignments: [{id,                    | §5     |
// |                                                      |   assignmentReference, initialQuantity, remainingQuantity|        |
// |                                                      |   (bytes), assignmentDateTime, startTime?, endTime?,     |        |
// |                                                      |   bundleState (any case), unlimited}]}]}                 |        |
// | DELETE /esims/{iccid}/bundles/{name}?type=validate   | {status} (refundable|revocable in the fake: UNCONFIRMED) | §5     |
// | DELETE ...?type=transaction&refundToBalance=true     | {status} (refunded|revoked in the fake); the parameter's | §5     |
// |                                                      |   name is UNCONFIRMED                                    |        |

import { isValidIccid } from "../../lib/luhn.ts";
import type { ProvisionedProfile } from "../carrier.ts";
import { isObject } from "./client.ts";

const SMDP_ADDRESS = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/;
const MATCHING_ID = /^[0-9A-Za-z-]{1,255}$/;

export type OrderLine = { item: string; quantity: number; iccids: string[]; esims: unknown[] };

export type EsimGoOrder = {
  reference: string;
  status: string;
  /** ms since the epoch; `createdDate` in the POST answer, `createDate` in lists (§6: both read). */
  created_ms: number | null;
  lines: OrderLine[];
};

export function parseOrder(value: unknown): EsimGoOrder | null {
  if (!isObject(value)) return null;
  const reference = value.orderReference;
  if (typeof reference !== "string" || reference === "" || reference.length > 100) return null;
  const created = value.createdDate ?? value.createDate;
  const created_ms = typeof created === "string" ? Date.parse(created) : Number.NaN;
  const lines = Array.isArray(value.order) ? value.order.filter(isObject) : [];
  return {
    reference,
    status: typeof value.status === "string" ? value.status.toLowerCase() : "",
    created_ms: Number.isFinite(created_ms) ? created_ms : null,
    lines: lines.map((line) => ({
      item: typeof line.item === "string" ? line.item : "",
      quantity: Number(line.quantity),
      iccids: Array.isArray(line.iccids) ? line.iccids.filter((one) => typeof one === "string") : [],
      esims: Array.isArray(line.esims) ? line.esims : [],
    })),
  };
}

/** GET /orders: a bare array on the official page, `{orders: [...]}` per [3P-OAS] (§6): both read. */
export function parseOrderList(value: unknown): EsimGoOrder[] | null {
  const list = Array.isArray(value)
    ? value
    : isObject(value) && Array.isArray(value.orders)
      ? value.orders
      : null;
  if (list === null) return null;
  const orders = list.map(parseOrder);
  return orders.every((order) => order !== null) ? (orders as EsimGoOrder[]) : null;
}

/** `{iccid, matchingId, smdpAddress}`, in an order line's `esims` or the install details (§3). */
export function parseProfile(value: unknown): ProvisionedProfile | null {
  if (!isObject(value)) return null;
  const { iccid, matchingId, smdpAddress } = value;
  if (typeof iccid !== "string" || !isValidIccid(iccid)) return null;
  if (typeof matchingId !== "string" || !MATCHING_ID.test(matchingId)) return null;
  if (typeof smdpAddress !== "string") return null;
  // The example prints "http://smdp.example.com" (§3): the LPA string wants the bare host.
  const host = smdpAddress.replace(/^https?:\/\//, "").replace(/\/+$/, "");
  if (!SMDP_ADDRESS.test(host)) return null;
  return { iccid, smdp_address: host, activation_code: matchingId };
}

/** Install details in JSON: one object for one eSIM, an array for several (UNCONFIRMED, §3). */
export function parseInstallDetails(value: unknown): ProvisionedProfile[] | null {
  const items = Array.isArray(value) ? value : [value];
  const profiles = items.map(parseProfile);
  return profiles.every((profile) => profile !== null) ? (profiles as ProvisionedProfile[]) : null;
}

export type EsimDetails = { iccid: string; profile_status: string; first_installed_at: string | null };

export function parseEsimDetails(value: unknown): EsimDetails | null {
  if (!isObject(value) || typeof value.iccid !== "string") return null;
  return {
    iccid: value.iccid,
    profile_status: typeof value.profileStatus === "string" ? value.profileStatus.toLowerCase() : "",
    first_installed_at: instant(value.firstInstalledDateTime),
  };
}

export type Assignment = {
  id: string;
  name: string;
  reference: string;
  /** Lower case (the guide prints lower case, [GO] Title case: §5). */
  state: string;
  initial_bytes: number;
  remaining_bytes: number;
  unlimited: boolean;
  assigned_at: string | null;
  started_at: string | null;
  ends_at: string | null;
};

/** GET /esims/{iccid}/bundles: `{bundles: [{name, assignments: [...]}]}` (§5). */
export function parseAssignments(value: unknown): Assignment[] | null {
  if (!isObject(value) || !Array.isArray(value.bundles)) return null;
  const assignments: Assignment[] = [];
  for (const bundle of value.bundles) {
    if (!isObject(bundle) || typeof bundle.name !== "string" || !Array.isArray(bundle.assignments))
      return null;
    for (const one of bundle.assignments) {
      if (!isObject(one)) return null;
      const initial = Number(one.initialQuantity);
      const remaining = Number(one.remainingQuantity);
      if (!Number.isFinite(initial) || !Number.isFinite(remaining)) return null;
      assignments.push({
        id: String(one.id ?? ""),
        name: bundle.name,
        reference: typeof one.assignmentReference === "string" ? one.assignmentReference : "",
        state: typeof one.bundleState === "string" ? one.bundleState.toLowerCase() : "",
        initial_bytes: initial,
        remaining_bytes: remaining,
        unlimited: one.unlimited === true,
        assigned_at: instant(one.assignmentDateTime),
        started_at: instant(one.startTime),
        ends_at: instant(one.endTime),
      });
    }
  }
  return assignments;
}

/** An ISO string or ms since the epoch ("UTC in Milliseconds", §3) as RFC 3339, or null. */
export function instant(value: unknown): string | null {
  const ms = typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

// The Airalo shapes this adapter reads and sends, each with its section of docs/suppliers/airalo.md
// (which gives the primary sources: [DOC:...] pages, [SPEC ...], the official SDKs). Airalo types
// loosely (quantity 1 or "1", price 7.5 or "9.50", validity 15 or "7": §3, §6), so every parser
// here accepts a number or a numeric string and reads only the fields it needs.
//
// | We send                                            | Airalo answers (what we read)                       | Doc §      |
// |----------------------------------------------------|-----------------------------------------------------|------------|
// | POST /v2/token client_id, client_secret,            | {data: {access_token, expires_in}}                   | §1         |
// |   grant_type=client_credentials (multipart)         |                                                     |            |
// | POST /v2/orders package_id, quantity=1, type=sim,   | 200 {data: {id, description, created_at,            | §3         |
// |   description="[esim-ref:<ref>] partner order"      |   sims: [{iccid, lpa, matching_id, qrcode}]}}        |            |
// | POST /v2/orders/topups package_id, iccid,           | 200 {data: {id, type: "topup", package_id,           | §4         |
// |   description (multipart)                           |   description (maybe "Topup (<iccid>)"), created_at}} |            |
// | GET /v2/orders?filter[description]=<tag>            | {data: [order (+ sims)], meta: {last_page}}          | §6         |
// |   &include=sims,status&limit=50                     |                                                     |            |
// | GET /v2/orders?filter[iccid]=<iccid>&include=status | the same; top-ups of that eSIM (filter UNCONFIRMED   | §6         |
// |   &filter[created_at]=Y-m-d - Y-m-d                 |   to cover top-ups; the fake does)                   |            |
// | GET /v2/orders/{id}?include=status                  | {data: {status: {slug: completed|refunded|...}}}     | §6         |
// | GET /v2/sims/{iccid}                                | {data: {iccid, recycled, recycled_at, simable}};     | §3, §5     |
// |                                                     |   404 messages.resource_not_found                    |            |
// | GET /v2/sims/{iccid}/usage                          | {data: {remaining, total, expired_at, is_unlimited,  | §5         |
// |                                                     |   status: NOT_ACTIVE|ACTIVE|FINISHED|EXPIRED|UNKNOWN|RECYCLED}} |   |
// | POST /v2/refund iccids[], reason (multipart)        | 202 {data: {refund_id, created_at}}                  | §5         |
// | errors                                              | 422 {code, reason}; 422 {data, meta: {message}};     | §7         |
// |                                                     |   429 {message}; 401; 5xx                            |            |
//
// The LPA activation code: `qrcode` is "LPA:1$<lpa>$<matching_id>" (§3): `lpa` is the SM-DP+
// address and `matching_id` the activation code. We read `lpa` and `matching_id`, and fall back to
// parsing `qrcode` only when one is missing.

import { isValidIccid } from "../../lib/luhn.ts";
import type { ProvisionedProfile } from "../carrier.ts";
import { isObject } from "./client.ts";

const SMDP_ADDRESS = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/;
const MATCHING_ID = /^[0-9A-Za-z-]{1,255}$/;

export type AiraloOrder = {
  id: string;
  type: "sim" | "topup" | string;
  package_id: string | null;
  description: string | null;
  /** "2025-04-15 14:02:38" as Airalo wrote it (the zone is not documented: UTC assumed). */
  created_at: string | null;
  status: string | null;
  sims: unknown[];
};

export function parseOrder(value: unknown): AiraloOrder | null {
  if (!isObject(value)) return null;
  const id = value.id;
  if (
    !(typeof id === "number" && Number.isSafeInteger(id)) &&
    !(typeof id === "string" && /^\d{1,18}$/.test(id))
  ) {
    return null;
  }
  return {
    id: String(id),
    type: typeof value.type === "string" ? value.type : "",
    package_id: typeof value.package_id === "string" ? value.package_id : null,
    description: typeof value.description === "string" ? value.description : null,
    created_at: typeof value.created_at === "string" ? value.created_at : null,
    status: isObject(value.status) && typeof value.status.slug === "string" ? value.status.slug : null,
    sims: Array.isArray(value.sims) ? value.sims : [],
  };
}

/** The order list's `data` (GET /v2/orders), orders that do not parse left out. */
export function parseOrderList(body: unknown): { orders: AiraloOrder[]; last_page: number } | null {
  if (!isObject(body) || !Array.isArray(body.data)) return null;
  const meta = isObject(body.meta) ? body.meta : {};
  const last_page = Number(meta.last_page ?? 1);
  return {
    orders: body.data.map(parseOrder).filter((order): order is AiraloOrder => order !== null),
    last_page: Number.isFinite(last_page) ? last_page : 1,
  };
}

/** sims[0] of an order as our profile; null when it is not a well-formed eSIM. */
export function parseProfile(sim: unknown): ProvisionedProfile | null {
  if (!isObject(sim)) return null;
  const iccid = typeof sim.iccid === "string" ? sim.iccid : null;
  if (iccid === null || !isValidIccid(iccid)) return null;
  let smdp_address = typeof sim.lpa === "string" ? sim.lpa : null;
  let activation_code = typeof sim.matching_id === "string" ? sim.matching_id : null;
  if ((smdp_address === null || activation_code === null) && typeof sim.qrcode === "string") {
    const parts = /^LPA:1\$([^$]+)\$([^$]+)$/.exec(sim.qrcode);
    smdp_address ??= parts?.[1] ?? null;
    activation_code ??= parts?.[2] ?? null;
  }
  if (smdp_address === null || !SMDP_ADDRESS.test(smdp_address)) return null;
  if (activation_code === null || !MATCHING_ID.test(activation_code)) return null;
  return { iccid, smdp_address, activation_code };
}

export type AiraloUsage = {
  remaining_mb: number;
  total_mb: number;
  expired_at: string | null;
  is_unlimited: boolean;
  status: "NOT_ACTIVE" | "ACTIVE" | "FINISHED" | "EXPIRED" | "UNKNOWN" | "RECYCLED";
};

const USAGE_STATUSES = ["NOT_ACTIVE", "ACTIVE", "FINISHED", "EXPIRED", "UNKNOWN", "RECYCLED"] as const;

export function parseUsage(data: unknown): AiraloUsage | null {
  if (!isObject(data)) return null;
  const status = USAGE_STATUSES.find((known) => known === data.status);
  const remaining = Number(data.remaining ?? 0);
  const total = Number(data.total ?? 0);
  if (status === undefined || !Number.isFinite(remaining) || !Number.isFinite(total)) return null;
  return {
    remaining_mb: Math.max(0, Math.round(remaining)),
    total_mb: Math.max(0, Math.round(total)),
    expired_at: typeof data.expired_at === "string" ? data.expired_at : null,
    is_unlimited: data.is_unlimited === true,
    status,
  };
}

/** "2025-04-15 14:02:38" (Airalo, UTC assumed) as RFC 3339; null when it is not that. */
export function airaloInstant(value: string | null): string | null {
  if (value === null) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)/.exec(value);
  if (!match) return null;
  const instant = new Date(`${match[1]}T${match[2]!.length === 5 ? `${match[2]}:00` : match[2]}Z`);
  return Number.isNaN(instant.getTime()) ? null : instant.toISOString();
}

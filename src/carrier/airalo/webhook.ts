// Airalo's webhooks, as its docs describe them (docs/suppliers/airalo.md §8): POSTs with
// `Content-Type: application/json` and the header `airalo-signature`, "a HMAC value with sha512
// algorithm" ([DOC:webhook-definition-1380483m0]). The docs do not name the key or the bytes signed
// (UNCONFIRMED); the official SDKs' Signature helpers, meant for checkSignature(hash, payload) too,
// compute hex(HMAC-SHA512(client_secret, payload)) over the payload re-serialised compactly with
// "/" escaped as "\/" ([NODE] src/helpers/Signature.js). So a body is genuine when its signature is
// that HMAC of the raw body as received, or of the SDKs' normal form of it; each compared in
// constant time. The bodies: low data {level, package_name, remaining_percentage, iccid} (levels
// "1days", "3days", "75%", "90%"), credit limit {message, remaining}, and an async order (the
// order answer plus `request_id`, its placement UNCONFIRMED).
import { createHmac, timingSafeEqual } from "node:crypto";
import { isSupplierIccid } from "../../lib/luhn.ts";
import { isObject } from "./client.ts";

/** A webhook body we read at most: Airalo's are a few hundred bytes (an async order a few KB). */
export const MAX_WEBHOOK_BYTES = 64 * 1024;

export type AiraloWebhook =
  | { kind: "low_data"; iccid: string; level: string; remaining_percentage: number | null }
  | { kind: "credit_limit"; message: string; remaining: number | null }
  | { kind: "async_order"; request_id: string | null; iccids: string[] }
  | { kind: "other" };

const SIGNATURE = /^[0-9a-fA-F]{128}$/;

function hmac(secret: string, text: string): Buffer {
  return createHmac("sha512", secret).update(text, "utf8").digest();
}

/** The SDKs' normal form: compact JSON, "/" written "\/" (PHP json_encode's default). null: not JSON. */
function sdkForm(raw: string): string | null {
  try {
    return JSON.stringify(JSON.parse(raw)).replace(/\//g, "\\/");
  } catch {
    return null;
  }
}

/** Whether `signature` (the `airalo-signature` header) is Airalo's HMAC of `raw` under `secret`. */
export function isSignedByAiralo(secret: string, raw: string, signature: string | undefined): boolean {
  if (secret === "" || typeof signature !== "string" || !SIGNATURE.test(signature)) return false;
  const given = Buffer.from(signature, "hex");
  if (timingSafeEqual(given, hmac(secret, raw))) return true;
  const normal = sdkForm(raw);
  return normal !== null && normal !== raw && timingSafeEqual(given, hmac(secret, normal));
}

/** What a (verified) body says; `other` for a shape the docs do not describe. */
export function readAiraloWebhook(body: unknown): AiraloWebhook {
  if (!isObject(body)) return { kind: "other" };
  if (typeof body.iccid === "string" && typeof body.level === "string") {
    if (!isSupplierIccid(body.iccid)) return { kind: "other" };
    const share = Number(body.remaining_percentage);
    return {
      kind: "low_data",
      iccid: body.iccid,
      level: body.level.slice(0, 32),
      remaining_percentage: Number.isFinite(share) ? share : null,
    };
  }
  if (typeof body.message === "string" && "remaining" in body) {
    const remaining = Number(body.remaining);
    return {
      kind: "credit_limit",
      message: body.message.slice(0, 200),
      remaining: Number.isFinite(remaining) ? remaining : null,
    };
  }
  const order = isObject(body.data) ? body.data : body;
  const request_id = body.request_id ?? order.request_id;
  if (request_id !== undefined || Array.isArray(order.sims)) {
    const sims = Array.isArray(order.sims) ? order.sims : [];
    const iccids = sims
      .map((sim) => (isObject(sim) ? sim.iccid : null))
      .filter((iccid): iccid is string => typeof iccid === "string" && isSupplierIccid(iccid));
    return {
      kind: "async_order",
      request_id:
        typeof request_id === "string" || typeof request_id === "number" ? String(request_id) : null,
      iccids: iccids.slice(0, 50),
    };
  }
  return { kind: "other" };
}

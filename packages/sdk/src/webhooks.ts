// Standard Webhooks (standardwebhooks.com) verification and signing with WebCrypto, so it runs
// the same on Node 20+, browsers and edge runtimes. The signature is `v1,` + base64 of
// HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the base64-decoded part
// of the `whsec_…` secret; during a secret rotation the header holds two, space-separated (up to
// five after several rotations within 24 hours).
import { WebhookVerificationError } from "./errors.ts";

/** How far the timestamp may be from now, either way, in seconds (replayed or delayed deliveries). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
/** A header holding more signatures than this is refused rather than checked one by one. */
const MAX_SIGNATURES = 10;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyWebhookInput = {
  /** The raw request body, exactly as received (not re-serialised JSON). */
  payload: string | Uint8Array;
  headers: WebhookHeaders;
  /** The endpoint's `whsec_…` secret. */
  secret: string;
  /** Default 300. */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (for tests). */
  nowSeconds?: number;
};

/** The event as the API sent it. */
export type WebhookEvent = { id: string; type: string; created_at: string; data: unknown };

/**
 * Checks the signature and timestamp and returns the parsed event; throws
 * WebhookVerificationError otherwise. The event id is your idempotency key: deliveries repeat.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<WebhookEvent> {
  const id = header(input.headers, "webhook-id");
  const timestamp = header(input.headers, "webhook-timestamp");
  const signatures = header(input.headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook headers");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("invalid webhook-timestamp");
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  // NaN would make every timestamp pass the window below: old deliveries could be replayed.
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new RangeError("toleranceSeconds must be >= 0");
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");
  }
  const body = typeof input.payload === "string" ? input.payload : new TextDecoder().decode(input.payload);
  const key = await hmacKey(input.secret, "verify");
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const candidates = signatures.split(" ").filter((part) => part !== "");
  if (candidates.length > MAX_SIGNATURES) throw new WebhookVerificationError("too many signatures");
  for (const candidate of candidates) {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v1" || !value) continue;
    const bytes = decodeBase64(value);
    // WebCrypto's verify compares in constant time: no early exit that leaks how much matched.
    if (bytes && (await crypto.subtle.verify("HMAC", key, bytes, signed))) return JSON.parse(body);
  }
  throw new WebhookVerificationError("no matching signature");
}

/** The three headers for a body, signed like the API signs (to test your receiver). */
export async function signWebhook(input: {
  id: string;
  payload: string;
  secret: string;
  timestampSeconds?: number;
}): Promise<{ "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string }> {
  const timestamp = String(input.timestampSeconds ?? Math.floor(Date.now() / 1000));
  const key = await hmacKey(input.secret, "sign");
  const signed = new TextEncoder().encode(`${input.id}.${timestamp}.${input.payload}`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
  return {
    "webhook-id": input.id,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${encodeBase64(mac)}`,
  };
}

function hmacKey(secret: string, usage: "sign" | "verify") {
  const bytes = decodeBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError("the secret is not base64");
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : value;
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

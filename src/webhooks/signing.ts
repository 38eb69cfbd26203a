// Standard Webhooks signatures (standardwebhooks.com): `v1,` + base64 HMAC-SHA256 over
// `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the base64-decoded bytes after `whsec_`.
// During a rotation's overlap both secrets sign (and every secret replaced in the last 24 hours, up
// to five in all): the signatures are space-separated, newest first, and a receiver holding any one
// of the secrets verifies.
import { createHmac } from "node:crypto";

export function signature(secret: string, id: string, timestamp_s: number, body: string): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp_s}.${body}`).digest("base64")}`;
}

export type WebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp_s: number,
  body: string,
): WebhookHeaders {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp_s),
    "webhook-signature": secrets.map((secret) => signature(secret, id, timestamp_s, body)).join(" "),
  };
}

// Outgoing webhooks (async orders, low data), as [DOC:webhook-definition-1380483m0] describes them:
// POST, Content-Type: application/json, header `airalo-signature` = hex HMAC-SHA512. The docs do not
// name the key or the bytes signed (UNCONFIRMED); the fake signs with the client secret over the
// exact body it sends, and sends the body the SDKs' Signature.preparePayload() would produce
// (compact JSON with "/" escaped as "\/", PHP json_encode's default: [NODE] src/helpers/Signature.js),
// so both a raw-body check and the SDKs' checkSignature() accept it.
// Retries are not documented (UNCONFIRMED): a delivery without a 2xx is tried 3 times, 1 s apart.
import { createHmac } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";

export type Delivery = {
  type: "async_orders" | "webhook_low_data";
  url: string;
  body: string;
  signature: string;
  attempts: number;
  /** The receiver's last status, or null after a connection failure. */
  status: number | null;
  at: string;
};

const ATTEMPTS = 3;
const RETRY_PAUSE_MS = 1_000;
const DELIVERY_TIMEOUT_MS = 10_000;
/** The last deliveries kept for GET /control/webhooks. */
const KEPT_DELIVERIES = 200;

export function webhookBody(payload: unknown): string {
  return JSON.stringify(payload).replace(/\//g, "\\/");
}

export function webhookSignature(secret: string, body: string): string {
  return createHmac("sha512", secret).update(body).digest("hex");
}

export class WebhookSender {
  readonly deliveries: Delivery[] = [];
  private readonly pending = new Set<Promise<void>>();

  private readonly secret: string;
  private readonly closing: AbortSignal;
  private readonly log: (message: string) => void;

  constructor(secret: string, closing: AbortSignal, log: (message: string) => void) {
    this.secret = secret;
    this.closing = closing;
    this.log = log;
  }

  /** Starts a delivery in the background; its record appears in `deliveries` when it ends. */
  send(type: Delivery["type"], url: string, payload: unknown): void {
    const delivery = this.deliver(type, url, webhookBody(payload)).finally(() =>
      this.pending.delete(delivery),
    );
    this.pending.add(delivery);
  }

  /** Waits for the deliveries under way (close() calls it after aborting their pauses). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async deliver(type: Delivery["type"], url: string, body: string): Promise<void> {
    const signature = webhookSignature(this.secret, body);
    let status: number | null = null;
    let attempts = 0;
    while (attempts < ATTEMPTS && !this.closing.aborted) {
      attempts++;
      status = await this.post(url, body, signature);
      if (status !== null && status >= 200 && status < 300) break;
      await delay(RETRY_PAUSE_MS, undefined, { signal: this.closing }).catch(() => undefined);
    }
    this.deliveries.push({ type, url, body, signature, attempts, status, at: new Date().toISOString() });
    if (this.deliveries.length > KEPT_DELIVERIES) this.deliveries.shift();
  }

  private async post(url: string, body: string, signature: string): Promise<number | null> {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "airalo-signature": signature },
        body,
        signal: AbortSignal.any([this.closing, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)]),
      });
      await response.arrayBuffer();
      return response.status;
    } catch (error) {
      this.log(`airalo fake: webhook to ${url} failed: ${(error as Error).message}`);
      return null;
    }
  }
}

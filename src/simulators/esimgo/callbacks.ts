// V3 usage callbacks: a POST of the JSON body to the configured URL (the portal's "Callback URL";
// here env ESIMGO_SIM_CALLBACK_URL or the control route), signed with `X-Signature-SHA256`, an
// HMAC-SHA256 of the raw body keyed with the API key ([DOC:guides/webhooks/],
// [DOC:api/v2_4/operations/your-usage-callback-url/post]). The encoding is base64 or hex (the docs
// disagree: UNCONFIRMED; ESIMGO_SIM_SIGNATURE_ENCODING chooses). Retries: UNCONFIRMED, a few with
// doubling pauses; kept in memory (a callback lost with the process is lost, as a real one can be).
import { createHmac } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { CallbackEvent } from "./answers.ts";
import type { CallbackSettings } from "./faults.ts";
import { CALLBACK_RETRY } from "./unconfirmed.ts";

const TIMEOUT_MS = 10_000;

export function sign(body: string, key: string, encoding: "base64" | "hex"): string {
  return createHmac("sha256", key).update(body).digest(encoding);
}

export function pushCallbacks(
  events: CallbackEvent[],
  settings: CallbackSettings,
  api_key: string,
  closing: AbortSignal,
  log: (message: string) => void,
): void {
  if (!settings.callback_url) return;
  for (const event of events) {
    void deliver(
      settings.callback_url,
      JSON.stringify(event),
      sign(JSON.stringify(event), api_key, settings.signature_encoding),
      closing,
    ).catch((error: unknown) => {
      if ((error as Error).name !== "AbortError") log(`esimgo callback failed: ${(error as Error).message}`);
    });
  }
}

async function deliver(url: string, body: string, signature: string, closing: AbortSignal): Promise<void> {
  for (let attempt = 1; attempt <= CALLBACK_RETRY.attempts; attempt++) {
    if (attempt > 1)
      await delay(CALLBACK_RETRY.first_pause_ms * 2 ** (attempt - 2), undefined, { signal: closing });
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-signature-sha256": signature },
        body,
        redirect: "manual",
        signal: AbortSignal.any([closing, AbortSignal.timeout(TIMEOUT_MS)]),
      });
      await response.body?.cancel();
      if (response.ok) return;
    } catch (error) {
      if (closing.aborted) throw error;
    }
  }
  throw new Error(`no 2xx from ${url} after ${CALLBACK_RETRY.attempts} attempts`);
}

// Pushing signals to the service, as a real carrier's notification system does: a POST of the
// eSIM's snapshot to the configured callback URL with the shared token, retried with backoff when
// the receiver does not answer 2xx. Faults (POST /control) make it a realistic network: added
// latency, duplicates, and reordering (a signal held back so a later one overtakes it).
// Deliveries live in memory: a signal lost with the simulator process is what the service's pull
// sync exists for.
import { setTimeout as delay } from "node:timers/promises";
import type { EsimSignal } from "../../protocols/carrier-api.ts";
import { type CallbackSettings, roll } from "./faults.ts";

/** Attempts per delivery and the first pause between them (doubled each time). */
const MAX_ATTEMPTS = 6;
const FIRST_RETRY_MS = 500;
const TIMEOUT_MS = 10_000;
/** Deliveries in flight per process; beyond it a signal is dropped (the pull sync covers it). */
const MAX_IN_FLIGHT = 1_000;

export class CallbackPusher {
  #in_flight = 0;
  readonly #settings: () => CallbackSettings;
  readonly #signal: AbortSignal;
  readonly #log: (message: string) => void;

  constructor(settings: () => CallbackSettings, closing: AbortSignal, log: (message: string) => void) {
    this.#settings = settings;
    this.#signal = closing;
    this.#log = log;
  }

  /** Whether push would send now: a callback URL is set and deliveries in flight have room. */
  accepting(): boolean {
    return this.#settings().callback_url !== null && this.#in_flight < MAX_IN_FLIGHT;
  }

  /** Sends the signal in the background (never awaited by the change that made it). */
  push(signal: EsimSignal): void {
    if (!this.accepting()) return;
    const settings = this.#settings();
    const copies = roll(settings.callback_duplicate_share) ? 2 : 1;
    for (let copy = 0; copy < copies; copy++) {
      this.#in_flight++;
      void this.#deliver(signal, settings)
        .catch((error: unknown) => {
          if ((error as Error).name !== "AbortError")
            this.#log(`callback failed: ${(error as Error).message}`);
        })
        .finally(() => this.#in_flight--);
    }
  }

  async #deliver(signal: EsimSignal, settings: CallbackSettings): Promise<void> {
    let wait_ms = settings.callback_latency_ms;
    if (roll(settings.callback_reorder_share)) wait_ms += settings.callback_reorder_ms;
    const body = JSON.stringify(signal);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (wait_ms > 0) await delay(wait_ms, undefined, { signal: this.#signal });
      // The URL and token of the moment: the service may have been moved while we waited.
      const { callback_url, callback_token } = this.#settings();
      if (callback_url === null) return;
      const status = await post(callback_url, callback_token, body);
      if (status >= 200 && status < 300) return;
      this.#log(`callback for ${signal.iccid} attempt ${attempt}: ${status === 0 ? "no answer" : status}`);
      wait_ms = FIRST_RETRY_MS * 2 ** (attempt - 1);
    }
  }
}

/** The HTTP status, or 0 when nothing answered. */
async function post(url: string, token: string | null, body: string): Promise<number> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0;
  }
}

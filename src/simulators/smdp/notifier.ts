// HandleDownloadProgressInfo, pushed to the operator (our service) after each device event: one
// POST per notification point, JSON with the ES2+ header and X-Admin-Protocol, the ICCID padded
// to 20 characters with F as SGP.22 allows, and a bearer token when configured. A delivery that
// does not get a 2xx is retried 5 more times with doubling pauses; `duplicate_share` delivers
// that share twice (the receiver must ignore the repeat). In memory, like a real push queue.
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Notification } from "./device-events.ts";
import type { SmdpProfile } from "./profiles.sql.ts";

export type NotifierSettings = {
  callback_url: string | null;
  callback_token: string | null;
  callback_duplicate_share: number;
};

const MAX_ATTEMPTS = 6;
const FIRST_RETRY_MS = 500;
const TIMEOUT_MS = 10_000;

export class Notifier {
  readonly #settings: () => NotifierSettings;
  readonly #requester_id: string;
  readonly #closing: AbortSignal;
  readonly #log: (message: string) => void;

  constructor(
    settings: () => NotifierSettings,
    requester_id: string,
    closing: AbortSignal,
    log: (m: string) => void,
  ) {
    this.#settings = settings;
    this.#requester_id = requester_id;
    this.#closing = closing;
    this.#log = log;
  }

  /** Sends the notifications in order, in the background. */
  push(profile: SmdpProfile, notifications: readonly Notification[]): void {
    if (this.#settings().callback_url === null || notifications.length === 0) return;
    const copies = Math.random() < this.#settings().callback_duplicate_share ? 2 : 1;
    void (async () => {
      for (const notification of notifications) {
        const body = this.#body(profile, notification);
        for (let copy = 0; copy < copies; copy++) await this.#deliver(profile.iccid, body);
      }
    })().catch((error: unknown) => {
      if ((error as Error).name !== "AbortError")
        this.#log(`notification failed: ${(error as Error).message}`);
    });
  }

  #body(profile: SmdpProfile, notification: Notification): string {
    return JSON.stringify({
      header: { functionRequesterIdentifier: this.#requester_id, functionCallIdentifier: randomUUID() },
      ...(profile.eid ? { eid: profile.eid } : {}),
      iccid: profile.iccid.length === 19 ? `${profile.iccid}F` : profile.iccid,
      profileType: profile.profile_type,
      timestamp: new Date().toISOString(),
      notificationPointId: notification.point,
      notificationPointStatus: {
        status: notification.status,
        ...(notification.code ? { statusCodeData: notification.code } : {}),
      },
    });
  }

  async #deliver(iccid: string, body: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const { callback_url, callback_token } = this.#settings();
      if (callback_url === null) return;
      const status = await post(callback_url, callback_token, body);
      if (status >= 200 && status < 300) return;
      this.#log(`notification for ${iccid} attempt ${attempt}: ${status === 0 ? "no answer" : status}`);
      await delay(FIRST_RETRY_MS * 2 ** (attempt - 1), undefined, { signal: this.#closing });
    }
  }
}

async function post(url: string, token: string | null, body: string): Promise<number> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json;charset=UTF-8",
        "x-admin-protocol": "gsma/rsp/v2.2.0",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
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

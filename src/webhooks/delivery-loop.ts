// The webhook delivery loop of one process: each round turns catalog changes into package.* events
// (announce-catalog-changes.ts), hands new events to endpoints (fan-out), then fills the free senders with due deliveries. A round runs on a short timer
// (WEBHOOK_POLL_MS), when another process announces due deliveries (NOTIFY
// webhook_deliveries_due: `wake`), and when a send of this process finishes. Never two rounds at
// once; at most WEBHOOK_CONCURRENCY calls in flight.
import type { Logger } from "pino";
import { eventBodies } from "../events/event-feed.ts";
import type { AppContext } from "../shared/context.ts";
import { announceCatalogChanges } from "./announce-catalog-changes.ts";
import {
  claimDueDeliveries,
  deliverOnce,
  type SuccessRecorder,
  successRecorder,
  successRetryWithinMs,
} from "./deliver-webhooks.ts";
import type { ClaimedDelivery } from "./deliveries.sql.ts";
import { DISPATCH_BATCH, dispatchEvents } from "./dispatch-events.ts";

/** Fan-out batches per round at most: a burst of events cannot keep a round from sending. */
const MAX_DISPATCH_BATCHES = 5;

export type DeliveryLoop = { wake: () => void; close: () => Promise<void> };

/** One attempt in the background, tracked in `sends` until it is recorded; then `done`. */
function sendInBackground(
  ctx: AppContext,
  log: Logger,
  sends: Set<Promise<unknown>>,
  successes: SuccessRecorder,
  claim: ClaimedDelivery,
  body: string | undefined,
  done: () => void,
): void {
  const sent = (async () => {
    if (body === undefined)
      throw new Error(`event ${claim.event_id} of delivery ${claim.delivery_id} is gone`);
    const result = await deliverOnce(ctx, claim, body, successes);
    if (result.kind !== "succeeded") {
      log.info(
        { delivery_id: claim.delivery_id, attempt: claim.attempts, ...result },
        "webhook attempt failed",
      );
    }
  })()
    .catch((error: unknown) => log.warn({ err: error, delivery_id: claim.delivery_id }, "webhook attempt"))
    .finally(() => {
      sends.delete(sent);
      done();
    });
  sends.add(sent);
}

export function startWebhookDelivery(ctx: AppContext, log: Logger): DeliveryLoop {
  const total = ctx.config.webhook_concurrency;
  if (total === 0) return { wake: () => undefined, close: async () => undefined };
  const sends = new Set<Promise<unknown>>();
  const successes = successRecorder(ctx.db, successRetryWithinMs(ctx.config));
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;

  const round = async () => {
    for (let batch = 0; batch < MAX_DISPATCH_BATCHES; batch++) {
      if (!(await announceCatalogChanges(ctx)).more) break;
    }
    for (let batch = 0; batch < MAX_DISPATCH_BATCHES; batch++) {
      if ((await dispatchEvents(ctx)).events < DISPATCH_BATCH) break;
    }
    const claims = await claimDueDeliveries(ctx, total - sends.size);
    if (claims.length === 0) return;
    const bodies = await eventBodies(
      ctx.db,
      claims.map((claim) => claim.event_id),
    );
    for (const claim of claims)
      sendInBackground(ctx, log, sends, successes, claim, bodies.get(claim.event_id), wake);
  };

  function wake(): void {
    if (closed) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = round()
      .catch((error: unknown) => log.warn({ err: error }, "webhook delivery round failed"))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  const timer = setInterval(wake, ctx.config.webhook_poll_ms);
  timer.unref();
  wake();
  return {
    wake,
    close: async () => {
      closed = true;
      clearInterval(timer);
      await running;
      // Bounded by WEBHOOK_TIMEOUT_MS; a send cut short here would only be sent again later.
      await Promise.all([...sends]);
    },
  };
}

// Issue 12's bench figure: the submit runs with a webhook endpoint subscribed to every event for
// every partner, delivered to a real receiver process (bench/webhook-receiver.ts). Here: the
// subscriptions, and what a run reports of them (deliveries received, backlog left at its end).

import { inParallel } from "../../test/support/fixtures.ts";
import { request } from "../../test/support/http.ts";
import type { Context } from "./context.ts";
import type { Partner } from "./setup.ts";

/** One endpoint per partner, `event_types` empty (every type), each on its own path of the receiver. */
export async function subscribeWebhooks(service_url: string, receiver_url: string, partners: Partner[]) {
  await inParallel(partners.length, 16, async (index) => {
    const partner = partners[index]!;
    const answer = await request(service_url, "POST", "/v1/webhook-endpoints", {
      key: partner.api_key,
      body: { url: `${receiver_url}/hooks/${index}`, description: "bench receiver", event_types: [] },
    });
    if (answer.status !== 201) {
      throw new Error(
        `subscribing a webhook endpoint answered ${answer.status}: ${JSON.stringify(answer.body)}`,
      );
    }
  });
}

export type WebhookCounts = {
  /** Deliveries the receiver has answered 204 since it started. */
  received: number;
  /** Events not handed to endpoints yet (their deliveries not made). */
  undispatched_events: number;
  /** Deliveries made and not yet succeeded (due, leased or waiting for a retry). */
  pending_deliveries: number;
};

/** Null with --no-webhooks, or for a `--service-dir` tree from before webhooks (migration 0009). */
export async function webhookCounts(ctx: Context): Promise<WebhookCounts | null> {
  if (ctx.webhook_receiver === null) return null;
  const found = await ctx.pool.query<{ found: boolean }>(
    "select to_regclass('webhook_deliveries') is not null as found",
  );
  if (!found.rows[0]!.found) return null;
  const backlog = await ctx.pool.query<{ events: string; deliveries: string }>(
    `select (select count(*) from events where dispatched_at is null) as events,
            (select count(*) from webhook_deliveries where status = 'pending') as deliveries`,
  );
  const answer = await fetch(`${ctx.webhook_receiver.url}/count`);
  const { received } = (await answer.json()) as { received: number };
  return {
    received,
    undispatched_events: Number(backlog.rows[0]!.events),
    pending_deliveries: Number(backlog.rows[0]!.deliveries),
  };
}

/** Events and deliveries still to go out: what the harness waits for between scenarios. */
export async function webhookBacklog(ctx: Context): Promise<number> {
  const counts = await webhookCounts(ctx);
  return counts === null ? 0 : counts.undispatched_events + counts.pending_deliveries;
}

/** The note of a measured run: deliveries received during it and the backlog at its end. */
export function webhookNote(before: WebhookCounts | null, after: WebhookCounts | null): string | null {
  if (before === null || after === null) return null;
  const received = after.received - before.received;
  // A run that records no event (discovery, replay) gets no note.
  if (received === 0 && after.undispatched_events + after.pending_deliveries === 0) return null;
  return (
    `${received} webhook deliveries received during the run, ` +
    `${after.undispatched_events} events not yet dispatched and ${after.pending_deliveries} deliveries pending at the end`
  );
}

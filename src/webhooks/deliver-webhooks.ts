// Sending deliveries: claim due ones within the concurrency bounds, make one attempt each, and record
// how it went. A claim is a lease (attempts + 1, a fresh token) committed before the call; the call
// holds no connection; only the lease holder records the outcome. A process killed mid-call loses
// nothing: its lease runs out and the delivery is claimed again (the receiver may see it twice,
// with the same webhook-id).
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import type { Executor } from "../db/executor.ts";
import type { AppContext } from "../shared/context.ts";
import { GroupCommit, recordingRetries } from "../shared/group-commit.ts";
import {
  type ClaimedDelivery,
  dueDeliveries,
  inFlightByEndpoint,
  leaseDeliveries,
  recordOutcome,
  recordSuccesses,
  type Success,
  serializeClaims,
} from "./deliveries.sql.ts";
import { disableGoneEndpoint, lockEndpointToUpdate, markEndpointFailing } from "./endpoints.sql.ts";
import { DISABLE_AFTER_FAILING_S, retryDelayMs } from "./retry-schedule.ts";
import { secretsOf } from "./secrets.ts";
import { type AttemptResult, sendWebhook } from "./send-webhook.ts";
import { webhookHeaders } from "./signing.ts";

/** Long enough for one whole attempt, with a margin: nobody else sends the delivery meanwhile. */
export function leaseMs(config: Pick<Config, "webhook_timeout_ms">): number {
  return 2 * config.webhook_timeout_ms + 5_000;
}

/**
 * Leases up to `free` due deliveries, at most WEBHOOK_ENDPOINT_CONCURRENCY in flight per endpoint
 * counting every process's, oldest due first.
 */
export async function claimDueDeliveries(ctx: AppContext, free: number): Promise<ClaimedDelivery[]> {
  if (free <= 0) return [];
  const cap = ctx.config.webhook_endpoint_concurrency;
  return ctx.db.transaction().execute(async (trx) => {
    await serializeClaims(trx);
    const in_flight = await inFlightByEndpoint(trx);
    const saturated = [...in_flight].filter(([, n]) => n >= cap).map(([endpoint_id]) => endpoint_id);
    const due = await dueDeliveries(trx, saturated, free * 4);
    const chosen: string[] = [];
    for (const delivery of due) {
      if (chosen.length >= free) break;
      const n = in_flight.get(delivery.endpoint_id) ?? 0;
      if (n >= cap) continue;
      in_flight.set(delivery.endpoint_id, n + 1);
      chosen.push(delivery.delivery_id);
    }
    return leaseDeliveries(trx, chosen, randomBytes(12).toString("base64url"), leaseMs(ctx.config));
  });
}

/** The current secret, then each replaced one while its rotation's overlap lasts, newest first. */
function signingSecrets(ctx: AppContext, claim: ClaimedDelivery): string[] {
  const box = secretsOf(ctx.config);
  const sealed = [claim.secret_sealed];
  if (claim.previous_secret_sealed !== null) sealed.push(claim.previous_secret_sealed);
  sealed.push(...claim.earlier_secrets_sealed);
  return sealed.map((secret) => box.open(claim.endpoint_id, secret));
}

async function attempt(ctx: AppContext, claim: ClaimedDelivery, body: string): Promise<AttemptResult> {
  let secrets: string[];
  try {
    secrets = signingSecrets(ctx, claim);
  } catch {
    // WEBHOOK_SECRET_KEY changed under stored secrets: say so on the delivery, never the secret.
    return { kind: "failed", status: null, error: "the signing secret could not be decrypted" };
  }
  return sendWebhook({
    url: claim.url,
    headers: { ...webhookHeaders(secrets, claim.event_id, Math.floor(Date.now() / 1000), body) },
    body,
    timeout_ms: ctx.config.webhook_timeout_ms,
    allow_private: ctx.config.webhook_allow_private_networks,
  });
}

/**
 * Successes are most attempts: those finishing while one is being recorded are recorded together in
 * the next statement, instead of two statements and a commit each. One per delivery loop.
 */
export type SuccessRecorder = GroupCommit<Success>;

export function successRecorder(db: Executor, retry_within_ms?: number): SuccessRecorder {
  const options = retry_within_ms === undefined ? undefined : recordingRetries(retry_within_ms);
  return new GroupCommit((successes) => recordSuccesses(db, successes), options);
}

/**
 * How long a success is tried to be recorded (issue 37): what is left of its lease after the
 * longest attempt. A success recorded after its lease changes nothing (recordSuccesses checks the
 * lease), and the delivery goes again: so a PostgreSQL restart or failover shorter than this sends
 * no webhook twice.
 */
export function successRetryWithinMs(config: Pick<Config, "webhook_timeout_ms">): number {
  return leaseMs(config) - config.webhook_timeout_ms;
}

/** One attempt of one claimed delivery, and its outcome recorded. */
export async function deliverOnce(
  ctx: AppContext,
  claim: ClaimedDelivery,
  body: string,
  successes: SuccessRecorder = successRecorder(ctx.db),
): Promise<AttemptResult> {
  const result = await attempt(ctx, claim, body);
  if (result.kind === "succeeded") {
    const { delivery_id, lease_token, endpoint_id } = claim;
    await successes.add({ delivery_id, lease_token, endpoint_id, status: result.status });
  } else if (result.kind === "gone") {
    const last_error = "410 Gone: the endpoint was disabled";
    const outcome = {
      status: "failed",
      retry_after_ms: null,
      last_response_status: 410,
      last_error,
    } as const;
    // One transaction: a failed delivery of a 410 is never seen (nor left by a crash) beside its
    // endpoint still enabled. The endpoint is locked first, as its DELETE locks it (no deadlock).
    await ctx.db.transaction().execute(async (trx) => {
      await lockEndpointToUpdate(trx, claim.endpoint_id);
      if (await recordOutcome(trx, claim.delivery_id, claim.lease_token, outcome))
        await disableGoneEndpoint(trx, claim.endpoint_id);
    });
  } else {
    const retry_after_ms = retryDelayMs(claim.attempts, ctx.config.webhook_first_retry_delay_ms);
    const outcome = {
      status: retry_after_ms === null ? "failed" : "pending",
      retry_after_ms,
      last_response_status: result.status,
      last_error: result.error,
    } as const;
    if (await recordOutcome(ctx.db, claim.delivery_id, claim.lease_token, outcome))
      await markEndpointFailing(ctx.db, claim.endpoint_id, DISABLE_AFTER_FAILING_S);
  }
  return result;
}

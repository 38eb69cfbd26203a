// The chaos client's HTTP: calls to whichever API process is alive, retried the way a careful
// partner retries, and what each answer says about an operation.
import { type Answer, request, TransportError } from "../http.ts";
import type { Rng } from "../rng.ts";
import { LONG_CLIENT_TIMEOUT_MS, MAX_WAIT_FOR_LIVE_PROCESS_MS, OPERATION_DEADLINE_MS } from "./options.ts";
import { type Final, type Operation, type Run, sleep } from "./state.ts";

export async function liveUrl(run: Run, rng: Rng, avoid: string | null): Promise<string> {
  const deadline = Date.now() + MAX_WAIT_FOR_LIVE_PROCESS_MS;
  for (;;) {
    const urls = run.cluster.liveUrls();
    const preferred = urls.filter((url) => url !== avoid);
    if (preferred.length > 0) return rng.pick(preferred);
    if (urls.length > 0) return urls[0]!;
    if (Date.now() > deadline) throw new Error("no API process came back within a minute");
    await sleep(100);
  }
}

export type Sent = { url: string; answer: Answer | null; transport: TransportError | null };

/** One HTTP call to a live process; transport failures are returned, not thrown, and counted. */
export async function send(
  run: Run,
  rng: Rng,
  method: string,
  path: string,
  options: {
    key: string;
    body?: unknown;
    headers?: Record<string, string>;
    timeout_ms?: number;
    avoid?: string | null;
  },
): Promise<Sent> {
  const url = await liveUrl(run, rng, options.avoid ?? null);
  try {
    const answer = await request(url, method, path, options);
    if (answer.status < 300) run.requestSucceeded();
    // A 503 says whose trouble it was: the carrier's, or the database's (busy, or restarting).
    run.count(run.stats.requests, answer.status === 503 ? `503 ${answer.body?.code}` : String(answer.status));
    if (answer.status >= 500 && answer.status !== 502 && answer.status !== 503) {
      run.breach(
        `${method} ${path} answered ${answer.status} ${answer.body?.code ?? ""} (request ${answer.headers.get("x-request-id")})`,
      );
    }
    return { url, answer, transport: null };
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
    run.count(run.stats.requests, error.kind);
    if (error.kind === "client_timeout") run.stats.client_timeouts += 1;
    return { url, answer: null, transport: error };
  }
}

/** A read or setup call that must eventually answer: retried on transport errors and 5xx. */
export async function sendUntilAnswered(
  run: Run,
  rng: Rng,
  method: string,
  path: string,
  options: { key: string; body?: unknown; headers?: Record<string, string> },
): Promise<Answer> {
  let avoid: string | null = null;
  for (let attempt = 0; attempt < 60; attempt++) {
    const sent = await send(run, rng, method, path, { ...options, avoid });
    if (sent.answer && sent.answer.status < 500) return sent.answer;
    avoid = sent.url;
    run.stats.retries += 1;
    await sleep(rng.int(50, 300));
  }
  throw new Error(`${method} ${path} got no answer in 60 attempts`);
}

export function retryAfterMs(answer: Answer, rng: Rng): number {
  const seconds = Number(answer.headers.get("retry-after") ?? 1);
  // A careful client honours Retry-After; capped so a short run stays short.
  return Math.min(Number.isFinite(seconds) ? seconds * 1000 : 1000, 1000) * (0.5 + rng.next() / 2);
}

export const ORDER_ID = /\bord_[A-Za-z0-9_-]+/;

/**
 * Sends one logical submit (purchase or top-up) until it reaches a final answer or the
 * operation's deadline: 200, 402 and 502 are final; 409, 503 and transport failures are retried
 * with the same cart_key or Idempotency-Key and body, sometimes on the other process.
 */
export async function submitUntilFinal(
  run: Run,
  rng: Rng,
  operation: Operation,
  path: string,
  headers: Record<string, string>,
  options: { race: boolean },
): Promise<void> {
  const deadline = Date.now() + OPERATION_DEADLINE_MS;
  let avoid: string | null = null;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    if (attempt > 0) run.stats.retries += 1;
    // Some attempts give up early, often mid-request: the server carries on without the client.
    const timeout_ms = rng.chance(0.3) ? rng.int(20, 1200) : LONG_CLIENT_TIMEOUT_MS;
    const call = (to: string | null) =>
      send(run, rng, "POST", path, {
        key: operation.partner.api_key,
        body: operation.body,
        headers,
        timeout_ms,
        avoid: to,
      });
    let sent: Sent;
    if (options.race && attempt === 0) {
      // The same submit twice at once, likely on both processes: exactly one may act.
      run.stats.duplicate_submits += 1;
      const [first, second] = await Promise.all([call(null), call(null)]);
      for (const other of [second]) if (other.answer) observe(run, operation, other.answer, path);
      sent = first;
    } else {
      sent = await call(avoid);
    }
    if (!sent.answer) {
      avoid = sent.url;
      await sleep(rng.int(50, 300));
      continue;
    }
    const final = observe(run, operation, sent.answer, path);
    if (final) {
      operation.final = final;
      return;
    }
    await sleep(sent.answer.status === 409 ? retryAfterMs(sent.answer, rng) : rng.int(200, 600));
  }
  operation.final = "unresolved";
}

/** Records what one answer says about an operation; returns its final outcome, or null to retry. */
export function observe(run: Run, operation: Operation, answer: Answer, path: string): Final | null {
  const what = `${operation.kind} op ${operation.op} (${operation.client_reference})`;
  switch (answer.status) {
    case 200: {
      const order_id = String(answer.body.orderID ?? "");
      // A submit's retry answers what the purchase answered, even after a refund (stored-outcome.ts);
      // a top-up finished by another driver and refunded with its eSIM meanwhile may read refunded.
      const refunded =
        answer.body.status === "refunded" && operation.refund !== "none" && operation.kind === "topup";
      if (answer.body.status !== "completed" && !refunded)
        run.breach(`${what}: 200 with status ${answer.body.status}`);
      if (answer.body.client_reference !== operation.client_reference) {
        run.breach(`${what}: 200 names client_reference ${answer.body.client_reference}`);
      }
      operation.order_ids.add(order_id);
      if (operation.kind === "purchase") run.purchaseCompleted();
      if (operation.order_ids.size > 1) {
        run.breach(
          `${what}: one operation answered with several orders: ${[...operation.order_ids].join(", ")}`,
        );
      }
      return "completed";
    }
    case 502: {
      if (answer.body.code !== "carrier_error") run.breach(`${what}: 502 with code ${answer.body.code}`);
      const order_id = ORDER_ID.exec(String(answer.body.detail ?? ""))?.[0];
      if (order_id) operation.order_ids.add(order_id);
      return "failed";
    }
    case 422:
      // A top-up of an eSIM refunded (cancelled) before it: refused before any hold, no order. One
      // racing the refund reaches the carrier instead, which refuses it (502 above).
      if (operation.kind !== "topup" || answer.body.code !== "topup_not_available") {
        run.breach(`${what}: 422 with code ${answer.body.code}`);
        return null;
      }
      operation.refused_before_order = true;
      return "failed";
    case 402:
      if (answer.body.code !== "insufficient_balance")
        run.breach(`${what}: 402 with code ${answer.body.code}`);
      return "insufficient";
    case 409:
      if (answer.body.code !== "request_in_progress")
        run.breach(`${what}: 409 with code ${answer.body.code}`);
      return null;
    case 503:
      // carrier_unavailable, or service_unavailable: the database was busy or going away (a
      // restart) mid-request; nothing was decided that a retry with the same key would not find.
      if (answer.body.code !== "carrier_unavailable" && answer.body.code !== "service_unavailable")
        run.breach(`${what}: 503 with code ${answer.body.code}`);
      return null;
    default:
      run.breach(
        `${what}: POST ${path} answered ${answer.status} ${answer.body?.code ?? ""}: ${answer.body?.detail ?? ""} ` +
          `(request ${answer.headers.get("x-request-id")})`,
      );
      return null;
  }
}

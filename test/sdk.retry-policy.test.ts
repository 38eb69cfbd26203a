// The SDK's retry rules as pure functions (packages/sdk/src/core/retry.ts): which answers are
// retried, how long the backoff waits (full jitter under a doubling, capped ceiling), and how
// Retry-After is read and capped. The end-to-end behaviour is in sdk.retries.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BASE_BACKOFF_MS,
  isRetryableAnswer,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  retryDelayMs,
} from "../packages/sdk/src/core/retry.ts";
import { EsimClient } from "../packages/sdk/src/index.ts";

test("retried: 408, 429, 500, 502, 503, 504 and 409 request_in_progress; final: the rest", () => {
  for (const status of [408, 429, 500, 502, 503, 504])
    assert.ok(isRetryableAnswer(status, null), `${status}`);
  assert.ok(isRetryableAnswer(409, "request_in_progress"));
  assert.ok(isRetryableAnswer(503, "carrier_unavailable"));
  for (const status of [400, 401, 402, 404, 410, 413, 415, 422, 501]) {
    assert.ok(!isRetryableAnswer(status, null), `${status}`);
  }
  assert.ok(!isRetryableAnswer(409, "idempotency_key_reused"));
  assert.ok(!isRetryableAnswer(409, null));
  assert.ok(!isRetryableAnswer(502, "carrier_error"), "the carrier's refusal is final");
});

test("a 429 is retried when it is rate_limited or has no code; resend_limit_reached (a daily quota) is final", () => {
  assert.ok(isRetryableAnswer(429, "rate_limited"));
  assert.ok(isRetryableAnswer(429, null), "a proxy's throttle, no problem body");
  assert.ok(!isRetryableAnswer(429, "resend_limit_reached"));
});

test("backoff is full jitter: anywhere from 0 up to a ceiling that doubles and stops at 8 s", () => {
  for (let retry = 0; retry < 8; retry++) {
    const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** retry);
    assert.equal(
      retryDelayMs(retry, null, () => 0),
      0,
    );
    assert.equal(
      retryDelayMs(retry, null, () => 0.999999),
      ceiling - 1,
    );
    assert.equal(
      retryDelayMs(retry, null, () => 0.5),
      ceiling / 2,
    );
  }
  assert.equal(
    retryDelayMs(20, null, () => 0.999999),
    MAX_BACKOFF_MS - 1,
  );
});

test("Retry-After wins over backoff, in seconds or as an HTTP date, capped at 60 s", () => {
  assert.equal(parseRetryAfter("3"), 3000);
  assert.equal(parseRetryAfter(" 0 "), 0);
  const now = Date.parse("2026-11-23T10:00:00Z");
  assert.equal(parseRetryAfter("Mon, 23 Nov 2026 10:00:05 GMT", now), 5000);
  assert.equal(parseRetryAfter("Mon, 23 Nov 2026 09:59:00 GMT", now), 0, "a date in the past: now");
  assert.equal(parseRetryAfter(null), null);
  assert.equal(parseRetryAfter("soon"), null);
  assert.equal(parseRetryAfter("-1"), null);
  assert.equal(
    retryDelayMs(0, 3000, () => 0),
    3000,
    "no jitter below what the API asked for",
  );
  assert.equal(retryDelayMs(0, 3_600_000), MAX_RETRY_AFTER_MS);
});

/** A fetch that answers 503 every time and counts the calls, with the headers each carried. */
function counting503(): { fetch: typeof fetch; calls: Headers[] } {
  const calls: Headers[] = [];
  const fetchImpl = (async (_input: unknown, init?: RequestInit) => {
    calls.push(new Headers(init?.headers));
    return new Response(JSON.stringify({ code: "service_unavailable" }), {
      status: 503,
      headers: { "content-type": "application/problem+json", "retry-after": "0" },
    });
  }) as typeof fetch;
  return { fetch: fetchImpl, calls };
}

test("a per-call maxRetries or timeout that is not a count is a RangeError, never endless retries", async () => {
  const { fetch: fetchImpl, calls } = counting503();
  const client = new EsimClient({ apiKey: "sand_x", baseUrl: "http://127.0.0.1:9", fetch: fetchImpl });
  await assert.rejects(client.wallet.get({ maxRetries: Number.NaN }), RangeError);
  await assert.rejects(client.wallet.get({ maxRetries: 1.5 }), RangeError);
  await assert.rejects(client.wallet.get({ timeout: Number.NaN }), RangeError);
  assert.equal(calls.length, 0, "refused before any request");
  await assert.rejects(client.wallet.get({ maxRetries: 2 }));
  assert.equal(calls.length, 3, "the first attempt and two retries");
});

test("a caller's headers in another case replace the SDK's instead of joining them", async () => {
  const { fetch: fetchImpl, calls } = counting503();
  const client = new EsimClient({ apiKey: "sand_x", baseUrl: "http://127.0.0.1:9", fetch: fetchImpl });
  await assert.rejects(client.wallet.get({ maxRetries: 0, headers: { Authorization: "Bearer sand_y" } }));
  assert.equal(calls[0]!.get("authorization"), "Bearer sand_y");
});

// One plan sent and judged: the answer checked, the environment taught what now exists.

import { type Built, build } from "./build.ts";
import { changedTables, type ResponseChecker, snapshotTables, type Violation } from "./checker.ts";
import { callJson } from "./fixtures.ts";
import { REPORT_CHARS } from "./limits.ts";
import type { Operation } from "./openapi.ts";
import { type AuthKind, INVALID_PARTNER_AUTH, type Plan, VALID_PARTNER_AUTH } from "./plans.ts";
import { rawHttp } from "./raw-http.ts";
import { type Answer, callerOf, type FuzzEnvironment, type Holdings, MAX_SENT, type Sent } from "./state.ts";

export type Outcome = {
  sequence: number;
  op: string;
  mutation: string;
  auth: AuthKind;
  request: { method: string; target: string; headers: string; body: string };
  status: number;
  code: string | null;
  route: string | null;
  violations: Violation[];
  response: string;
};

export type FuzzReport = {
  seed: number;
  /** Random requests; the sweep's come on top. */
  runs: number;
  sweep: number;
  duration_ms: number;
  /** op id -> status -> count */
  byRoute: Record<string, Record<string, number>>;
  byMutation: Record<string, number>;
  /** Distinct failures: kind, route, status and code, with a few examples each. */
  failures: Array<{ key: string; count: number; examples: Outcome[] }>;
  /** Operations that answered 2xx at least once: valid requests reached the code behind them. */
  succeeded: string[];
};

export function truncate(text: string, chars = REPORT_CHARS): string {
  return text.length > chars ? `${text.slice(0, chars)}… (${text.length} chars)` : text;
}

/** Extra invariants about credentials, beyond the document: a bad key never gets past 401. */
export function authViolations(
  auth: AuthKind,
  routed: Operation | null,
  answer: Answer,
  json: any,
): Violation[] {
  const out: Violation[] = [];
  if (!routed) return out;
  if (routed.area === "partner") {
    if (INVALID_PARTNER_AUTH.includes(auth)) {
      const expected = auth === "wrong_env" ? "wrong_environment" : "unauthorized";
      if (answer.status !== 401 || json?.code !== expected) {
        out.push({
          kind: "auth",
          message: `${auth} credentials answered ${answer.status} ${json?.code ?? ""}, not 401 ${expected}`,
        });
      }
    }
  }
  if (routed.area === "admin" && auth !== "admin" && auth !== "duplicate") {
    if (answer.status !== 401 && !(answer.status === 404 && json?.code === "not_found")) {
      out.push({ kind: "auth", message: `${auth} on the operator API answered ${answer.status}` });
    }
  }
  return out;
}

/** Learns from answers: new carts, orders, ICCIDs, keys and references join the pools. */
export function learn(env: FuzzEnvironment, sent: Sent, routed: Operation | null, answer: Answer, json: any) {
  const { pools } = env;
  const { built, auth } = sent;
  const path = routed?.path;
  const holdings = VALID_PARTNER_AUTH.includes(auth) ? pools.holdings[callerOf(auth)] : null;
  if (built.used.cart_key && path === "/v1/orders/submit" && [200, 409, 502, 503].includes(answer.status)) {
    for (const holder of Object.values(pools.holdings)) {
      holder.fresh_carts = holder.fresh_carts.filter((c) => c !== built.used.cart_key);
    }
    const owner = pools.holdings[built.used.caller];
    if (!owner.used_carts.includes(built.used.cart_key)) owner.used_carts.push(built.used.cart_key);
  }
  if (built.used.key_id && path === "/admin/api-keys/{key_id}" && answer.status === 204) {
    pools.revocable_key_ids = pools.revocable_key_ids.filter((k) => k !== built.used.key_id);
    pools.revoked_key_ids.push(built.used.key_id);
  }
  if (built.used.idempotency_key && answer.status < 500 && answer.status !== 400) {
    if (pools.idempotency_keys.length < 200) pools.idempotency_keys.push(built.used.idempotency_key);
  }
  if (built.used.credit_reference && answer.status === 201 && pools.credit_references.length < 200) {
    pools.credit_references.push(built.used.credit_reference);
  }
  // Replayable: answered POSTs of a normal size (a 200 KB body is kept only as its own mutation).
  if (routed?.method === "POST" && answer.status !== 0 && (built.body?.length ?? 0) <= 16_384) {
    pools.sent.push(sent);
    if (pools.sent.length > MAX_SENT) pools.sent.shift();
  }
  forgetDeletedEndpoint(env, path, built.used.endpoint_id, answer.status);
  const etag = answer.headers.etag;
  if (etag && answer.status === 200 && pools.etags.size < 500) pools.etags.set(built.target, etag);
  if (answer.status >= 300 || !json) return;
  if (path === "/v1/orders/cart" && answer.status === 201 && holdings && holdings.fresh_carts.length < 50) {
    holdings.fresh_carts.push(json.cart_key);
  }
  const bought = path === "/v1/orders/submit" || path === "/v1/orders/submit-topup";
  if (bought && answer.status === 200 && json.orderID && holdings) {
    if (!holdings.orders.includes(json.orderID) && holdings.orders.length < 500)
      holdings.orders.push(json.orderID);
    const iccid = json.purchases?.[0]?.iccid;
    if (iccid && !holdings.iccids.includes(iccid) && holdings.iccids.length < 100)
      holdings.iccids.push(iccid);
  }
  if (path === "/v1/profile/orders" && holdings && json.next_cursor && holdings.cursors.length < 50) {
    holdings.cursors.push(json.next_cursor);
  }
  if (path === "/admin/partners" && answer.status === 201) {
    if (pools.partner_ids.length < 100) pools.partner_ids.push(json.partner_id);
    pools.revocable_key_ids.push(json.key_id);
  }
  if (path === "/admin/orders/{orderID}/settle" && answer.status === 200) {
    pools.pending_orders = pools.pending_orders.filter((id) => id !== json.orderID);
  }
  if (path === "/admin/partners/{partner_id}/api-keys" && answer.status === 201) {
    pools.revocable_key_ids.push(json.key_id);
  }
  if (holdings) learnWebhooks(path, answer.status, json, holdings);
}

/** Endpoints created join the caller's pool, deleted ones leave every pool, test events join. */
function learnWebhooks(path: string | undefined, status: number, json: any, holdings: Holdings) {
  if (path === "/v1/webhook-endpoints" && status === 201 && holdings.endpoints.length < 20) {
    holdings.endpoints.push(json.endpoint_id);
  }
  if (path === "/v1/webhook-endpoints/{endpoint_id}/test" && status === 202 && holdings.events.length < 100) {
    holdings.events.push(json.event_id);
  }
}

/** A DELETE that succeeded: the endpoint is gone for everyone (called before the 2xx early return). */
function forgetDeletedEndpoint(
  env: FuzzEnvironment,
  path: string | undefined,
  endpoint_id: string | undefined,
  status: number,
) {
  if (path !== "/v1/webhook-endpoints/{endpoint_id}" || status !== 204 || endpoint_id === undefined) return;
  for (const holder of Object.values(env.pools.holdings)) {
    holder.endpoints = holder.endpoints.filter((id) => id !== endpoint_id);
    holder.deliveries = holder.deliveries.filter((d) => d.endpoint_id !== endpoint_id);
  }
}

/**
 * A replay is the same bytes sent again. Where the API promises idempotency (submit by cart_key,
 * submit-topup by Idempotency-Key), a final outcome must come back the same: the status, and for
 * a 200 the same order.
 */
export function replayViolations(original: Sent, answer: Answer, json: any): Violation[] {
  const keyed = original.built.headers.some(([name]) => name.toLowerCase() === "idempotency-key");
  const promised =
    original.route === "POST /v1/orders/submit" ||
    (original.route === "POST /v1/orders/submit-topup" && keyed) ||
    (original.route === "POST /v1/orders/{orderID}/refund" && keyed);
  if (!promised || ![200, 402, 502].includes(original.status)) return [];
  if (original.route === "POST /v1/orders/submit" && original.status === 402) return [];
  if (answer.status !== original.status) {
    return [{ kind: "replay", message: `first answered ${original.status}, the replay ${answer.status}` }];
  }
  if (original.status === 200 && json?.orderID !== original.json?.orderID) {
    return [
      { kind: "replay", message: `first order ${original.json?.orderID}, the replay's ${json?.orderID}` },
    ];
  }
  return [];
}

/**
 * Rejected requests that legitimately write: a 402 top-up and a 409 refund_not_allowed under an
 * Idempotency-Key store their outcome on the key.
 */
export function allowedChanges(routed: Operation | null, answer: Answer, built: Built): string[] {
  const keyed = built.headers.some(([name]) => name.toLowerCase() === "idempotency-key");
  if (routed?.path === "/v1/orders/submit-topup" && answer.status === 402 && keyed)
    return ["idempotency_keys"];
  if (routed?.path === "/v1/orders/{orderID}/refund" && answer.status === 409 && keyed) {
    return ["idempotency_keys"];
  }
  return [];
}

/** Headers the contract promises: Retry-After on answers that say "later", RateLimit-* on the partner API. */
export function headerViolations(routed: Operation | null, answer: Answer, json: any): Violation[] {
  const out: Violation[] = [];
  const later = ["rate_limited", "request_in_progress", "carrier_unavailable"].includes(json?.code);
  if (later && !/^\d+$/.test(answer.headers["retry-after"] ?? "")) {
    out.push({ kind: "headers", message: `${json.code} without a Retry-After of whole seconds` });
  }
  // Every authenticated partner call takes a token from the bucket and says so.
  if (
    routed?.area === "partner" &&
    answer.status !== 401 &&
    answer.headers["ratelimit-limit"] === undefined
  ) {
    out.push({
      kind: "headers",
      message: `HTTP ${answer.status} on the partner API without RateLimit-Limit`,
    });
  }
  return out;
}

/** The same request again, under a request id of its own. */
export function replayOf(built: Built, sequence: number): Built {
  const headers = built.headers.map(([name, value]): [string, unknown] =>
    name === "x-request-id" && String(value).startsWith("fuzz-") ? [name, `fuzz-${sequence}`] : [name, value],
  );
  return { ...built, headers };
}

export async function executePlan(
  env: FuzzEnvironment,
  checker: ResponseChecker,
  plan: Plan,
  sequence: number,
): Promise<Outcome> {
  const original =
    plan.replay !== null && env.pools.sent.length > 0
      ? env.pools.sent[plan.replay % env.pools.sent.length]!
      : null;
  const built = original ? replayOf(original.built, sequence) : await build(env, plan, sequence);
  const auth = original ? original.auth : plan.auth;
  const before = await snapshotTables(env.db);
  env.lastRoute = null;
  const violations: Violation[] = [];
  let answer: Answer;
  try {
    answer = await rawHttp(env.port, built.method, built.target, built.headers, built.body);
  } catch (error) {
    answer = { status: 0, headers: {}, body: Buffer.alloc(0), text: "" };
    violations.push({ kind: "transport", message: (error as Error).message });
  }
  const route = env.lastRoute as FuzzEnvironment["lastRoute"];
  const routed = route?.url ? (checker.operationFor(route) ?? hiddenOperation(env, route)) : null;
  let json: any = null;
  try {
    json = answer.text ? JSON.parse(answer.text) : null;
  } catch {
    json = null;
  }
  if (answer.status !== 0) {
    violations.push(...checker.check(answer, routed, built.method));
    // No route matched (unknown path or method, or a request the HTTP parser refused): 404 not_found
    // or 400 invalid_request, nothing else.
    const unroutedOk =
      (answer.status === 404 && json?.code === "not_found") ||
      (answer.status === 400 && json?.code === "invalid_request");
    if (!routed && !route?.url && !unroutedOk) {
      violations.push({
        kind: "unrouted",
        message: `no route matched, answered ${answer.status} ${json?.code ?? ""}`,
      });
    }
    violations.push(...authViolations(auth, routed, answer, json));
    violations.push(...headerViolations(routed, answer, json));
    if (original) violations.push(...replayViolations(original, answer, json));
  }
  if (answer.status >= 400 && answer.status < 500) {
    const after = await snapshotTables(env.db);
    const allowed = allowedChanges(routed, answer, built);
    const changed = changedTables(before, after).filter((table) => !allowed.includes(table));
    if (changed.length > 0) {
      violations.push({
        kind: "db_changed",
        message: `HTTP ${answer.status} ${json?.code ?? ""} changed ${changed.join(", ")}`,
      });
    }
  }
  const route_id = routed?.id ?? null;
  learn(env, { built, auth, route: route_id, status: answer.status, json }, routed, answer, json);
  await reactivateSuspended(env, routed, answer, json);
  const bodyText = built.body ? built.body.toString("utf8") : "";
  return {
    sequence,
    op: plan.op.id,
    mutation: original ? "replay" : plan.mutation,
    auth,
    request: {
      method: built.method,
      target: truncate(built.target, 300),
      headers: truncate(built.headers.map(([n, v]) => `${n}: ${String(v)}`).join(" | "), 600),
      body: truncate(bodyText),
    },
    status: answer.status,
    code: typeof json?.code === "string" ? json.code : null,
    route: routed?.id ?? (route?.url ? `${route.method} ${route.url}` : null),
    violations,
    response: truncate(answer.text),
  };
}

/**
 * A fuzzed PATCH that suspended a partner is undone at once: the world's partners stay active, so
 * their writes keep reaching the code behind them (a request in the moment before the notice
 * lands may still answer 403 partner_suspended, which every write it refuses documents: all but
 * those that only take access away, src/partners/suspension-exemptions.ts).
 */
async function reactivateSuspended(
  env: FuzzEnvironment,
  routed: Operation | null,
  answer: Answer,
  json: any,
) {
  if (
    routed?.id !== "PATCH /admin/partners/{partner_id}" ||
    answer.status !== 200 ||
    json?.status !== "suspended"
  )
    return;
  await callJson(env, "PATCH", `/admin/partners/${json.partner_id}`, {
    auth: env.fixtures.admin_token,
    body: { status: "active", reason: "fuzz: undone" },
  });
}

export function hiddenOperation(
  env: FuzzEnvironment,
  route: { method: string; url: string | null },
): Operation | null {
  return (
    env.operations.find((op) => !op.documented && op.method === route.method && op.path === route.url) ?? null
  );
}

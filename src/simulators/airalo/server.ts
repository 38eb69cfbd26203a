// The Airalo fake as an HTTP(S) service: Airalo's Partner API v2 routes under /v2, the control
// interface under /control, health at /healthz. startAiralo() is what both entry points use:
// main.ts runs it as a process of its own, and a sandbox may start it in-process.
import { setTimeout as delay } from "node:timers/promises";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type pg from "pg";
import {
  type Answer,
  badClientCredentials,
  businessError,
  invalid,
  ok,
  serverError,
  tooManyAttempts,
  unauthenticated,
} from "./answers.ts";
import { type Credentials, credentialsMatch, issueToken, tokenValid } from "./auth.ts";
import { type Fields, registerBodyParsers, text } from "./bodies.ts";
import type { Context } from "./context.ts";
import { registerControlRoutes } from "./control.ts";
import { type FaultSettings, type Limited, type Operation, takeFault } from "./faults.ts";
import { getOrderAnswer, includes, listOrdersAnswer, listPackages, type Query } from "./list.ts";
import { optIn, optOut, readOptIns, simulateWebhook, webhookUrl } from "./notifications.ts";
import { placeOrder, placeOrderAsync, validateOrder } from "./place-order.ts";
import { DOCUMENTED_LIMITS, RateLimiter } from "./rate-limit.ts";
import { requestRefund } from "./refunds.ts";
import { ensureAiraloSchema } from "./schema.ts";
import { simDetails, simPackages, simTopups, simUsage } from "./sims.ts";
import { topUp } from "./top-up.ts";
import { WebhookSender } from "./webhooks.ts";

export type AiraloOptions = {
  pool: pg.Pool;
  /** 0: an ephemeral port; read the chosen one from `url`. */
  port: number;
  host: string;
  client_id: string;
  client_secret: string;
  /** Bearer key of /control (default: the client secret). */
  control_key?: string;
  /** Lifetime of issued tokens (default 31622400 s, the docs' expires_in). */
  token_ttl_s?: number;
  /** PEM certificate and key: serve HTTPS (the official Node SDK speaks only https). */
  tls?: { cert: string; key: string } | null;
  /** Where webhooks go when nothing is opted in for their type. */
  webhook_url?: string | null;
  /** The partner's starting credit (default 100,000 USD). */
  initial_credit_usd?: number;
  smdp_address?: string;
  latency_ms?: number;
  log?: (message: string) => void;
};

export type RunningAiralo = { url: string; close: () => Promise<void> };

const BODY_LIMIT_BYTES = 64 * 1024;
const CLOSE_GRACE_MS = 3_000;
const USAGE_CACHE_MS = 20 * 60_000;
const DEFAULT_CREDIT_USD = 100_000;
/** Brands the fake knows for brand_settings_name (anything else is the documented 422). */
const BRANDS = ["Sandbox Brand"];

export async function startAiralo(options: AiraloOptions): Promise<RunningAiralo> {
  await ensureAiraloSchema(
    options.pool,
    Math.round((options.initial_credit_usd ?? DEFAULT_CREDIT_USD) * 100),
  );
  const closing = new AbortController();
  const log = options.log ?? (() => undefined);
  let settings: FaultSettings = {
    latency_ms: options.latency_ms ?? 0,
    usage_cache_ms: USAGE_CACHE_MS,
    rate_limits: { ...DOCUMENTED_LIMITS },
    armed: [],
    webhook_url: options.webhook_url ?? null,
    stock: {},
  };
  const limiter = new RateLimiter();
  const context: Context = {
    pool: options.pool,
    credentials: {
      client_id: options.client_id,
      client_secret: options.client_secret,
      token_ttl_s: options.token_ttl_s ?? 31_622_400,
    },
    settings: () => settings,
    limiter,
    webhooks: new WebhookSender(options.client_secret, closing.signal, log),
    smdp_address: options.smdp_address ?? "rsp.airalo-sim.test",
    brands: BRANDS,
    sleep: (ms) => (ms > 0 ? delay(ms, undefined, { signal: closing.signal }) : Promise.resolve()),
    log,
    usage_cache: new Map(),
  };
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    ...(options.tls ? { https: { cert: options.tls.cert, key: options.tls.key } } : {}),
  }) as unknown as FastifyInstance;
  registerBodyParsers(app);
  app.addHook("onRequest", authenticate(context.credentials, options.control_key ?? options.client_secret));
  app.addHook("onSend", async (_request, reply) => {
    if (closing.signal.aborted) reply.header("connection", "close");
  });
  app.setErrorHandler(errorHandler(log));
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send({ data: [], meta: { message: "Not Found" } }),
  );
  registerAiraloRoutes(app, context);
  registerControlRoutes(app, context, { get: () => settings, set: (next) => (settings = next) }, () =>
    limiter.reset(),
  );
  app.get("/healthz", async () => ({ ok: true }));
  try {
    await app.listen({ port: options.port, host: options.host });
  } catch (error) {
    await app.close();
    throw error;
  }
  return running(app, options.tls ? "https" : "http", closing, context.webhooks);
}

function running(
  app: FastifyInstance,
  scheme: string,
  closing: AbortController,
  webhooks: WebhookSender,
): RunningAiralo {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the Airalo fake has no TCP address");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closed: Promise<void> | null = null;
  return {
    url: `${scheme}://${host}:${address.port}`,
    close: () => {
      closed ??= (async () => {
        closing.abort();
        const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
          await webhooks.settle();
        } finally {
          clearTimeout(force);
        }
      })();
      return closed;
    },
  };
}

type Limits = (request: FastifyRequest) => [Limited, string][];

/** One Airalo call: rate limits, then the armed fault, then the work (README "Faults"). */
async function serve(
  context: Context,
  operation: Operation,
  request: FastifyRequest,
  reply: FastifyReply,
  limits: [Limited, string][],
  work: () => Promise<Answer>,
): Promise<FastifyReply | undefined> {
  await context.sleep(context.settings().latency_ms);
  let counted: { limit: number; remaining: number } | null = null;
  for (const [family, key] of limits) {
    const verdict = context.limiter.check(family, key, context.settings().rate_limits[family]);
    if (!verdict.allowed) return send(reply, tooManyAttempts(verdict.limit, verdict.retry_after_s));
    counted ??= verdict;
  }
  const fault = takeFault(context.settings(), operation);
  if (fault?.kind === "drop") return drop(request, reply);
  if (fault?.kind === "error") return send(reply, businessError(fault.code ?? 53, fault.additional));
  if (fault?.kind === "status") {
    const status = fault.status ?? 500;
    return send(reply, { status, body: fault.body ?? serverError(status).body });
  }
  if (fault?.kind === "delay") await context.sleep(fault.delay_ms ?? 0);
  const answer = await work();
  if (fault?.kind === "commit_then_500") return send(reply, serverError(500));
  if (fault?.kind === "drop_after_commit") return drop(request, reply);
  // Laravel's throttle adds these to every answer of a limited route.
  if (counted)
    reply.header("x-ratelimit-limit", counted.limit).header("x-ratelimit-remaining", counted.remaining);
  return send(reply, answer);
}

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
  return reply.code(answer.status).send(answer.body);
}

/** The connection dies with no answer: what a crash or a network cut looks like to the caller. */
function drop(request: FastifyRequest, reply: FastifyReply): undefined {
  reply.hijack();
  request.raw.socket.destroy();
  return undefined;
}

const ip = (request: FastifyRequest) => request.ip;
const bearer = (request: FastifyRequest) => (request.headers.authorization ?? "").slice("Bearer ".length);
const baseUrl = (request: FastifyRequest) => `${request.protocol}://${request.headers.host ?? "localhost"}`;

function registerAiraloRoutes(app: FastifyInstance, context: Context): void {
  const route = (
    method: "GET" | "POST",
    url: string,
    operation: Operation,
    limits: Limits,
    handle: (request: FastifyRequest) => Promise<Answer>,
  ) =>
    app.route({
      method,
      url,
      handler: (request, reply) =>
        serve(context, operation, request, reply, limits(request), () => handle(request)),
    });
  const none: Limits = () => [];
  const fields = (request: FastifyRequest) => (request.body ?? {}) as Fields;
  const query = (request: FastifyRequest) => request.query as Query;
  const iccid = (request: FastifyRequest) => (request.params as { iccid: string }).iccid;

  route(
    "POST",
    "/v2/token",
    "token",
    (r) => [["token", text(fields(r), "client_id") ?? ip(r)]],
    async (r) => token(context.credentials, fields(r)),
  );
  route(
    "GET",
    "/v2/packages",
    "packages",
    (r) => [["packages", bearer(r)]],
    async (r) => listPackages(query(r), baseUrl(r)),
  );
  route("POST", "/v2/orders", "order", none, async (r) => {
    const validated = validateOrder(context, fields(r));
    return "status" in validated ? validated : placeOrder(context, validated, null);
  });
  route("POST", "/v2/orders-async", "order_async", none, async (r) =>
    placeOrderAsync(
      context,
      fields(r),
      await webhookUrl(context, "async_orders", context.settings().webhook_url),
    ),
  );
  route("POST", "/v2/orders/topups", "topup", none, async (r) => topUp(context, fields(r)));
  route("GET", "/v2/orders", "orders_list", none, async (r) =>
    listOrdersAnswer(context, query(r), baseUrl(r)),
  );
  route("GET", "/v2/orders/:id", "order_get", none, async (r) =>
    getOrderAnswer(context, (r.params as { id: string }).id, query(r)),
  );
  route("GET", "/v2/sims/:iccid", "sim", none, async (r) =>
    simDetails(context, iccid(r), includes(query(r))),
  );
  route(
    "GET",
    "/v2/sims/:iccid/usage",
    "usage",
    (r) => [
      ["usage_per_iccid", iccid(r)],
      ["usage_per_company", context.credentials.client_id],
    ],
    async (r) => simUsage(context, iccid(r)),
  );
  route("GET", "/v2/sims/:iccid/topups", "sim_topups", none, async (r) => simTopups(context, iccid(r)));
  route(
    "GET",
    "/v2/sims/:iccid/packages",
    "sim_packages",
    (r) => [["sim_packages", iccid(r)]],
    async (r) => simPackages(context, iccid(r)),
  );
  route(
    "POST",
    "/v2/refund",
    "refund",
    (r) => [["refund", ip(r)]],
    async (r) => requestRefund(context, fields(r)),
  );
  route("POST", "/v2/notifications/opt-in", "notifications", none, async (r) => optIn(context, fields(r)));
  route("GET", "/v2/notifications/opt-in", "notifications", none, async () => readOptIns(context));
  route("POST", "/v2/notifications/opt-out", "notifications", none, async (r) => optOut(context, fields(r)));
  route(
    "POST",
    "/v2/simulator/webhook",
    "notifications",
    (r) => [["simulator_webhook", ip(r)]],
    async (r) => simulateWebhook(context, fields(r), context.settings().webhook_url),
  );
}

/** POST /v2/token [DOC:request-access-token-11883021e0]: the documented answer, a year's token by default. */
function token(credentials: Credentials, body: Fields): Answer {
  const client_id = text(body, "client_id");
  const client_secret = text(body, "client_secret");
  const grant_type = text(body, "grant_type");
  const errors: Record<string, string> = {};
  if (client_id === null) errors.client_id = "The client id field is required.";
  if (client_secret === null) errors.client_secret = "The client secret field is required.";
  if (grant_type !== "client_credentials") errors.grant_type = "The selected grant type is invalid.";
  if (Object.keys(errors).length > 0) return invalid(errors);
  if (!credentialsMatch(credentials, client_id!, client_secret!)) return badClientCredentials();
  return ok({
    token_type: "Bearer",
    expires_in: credentials.token_ttl_s,
    access_token: issueToken(credentials),
  });
}

function authenticate(credentials: Credentials, control_key: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0]!;
    const given = (request.headers.authorization ?? "").startsWith("Bearer ") ? bearer(request) : "";
    if (path === "/control" || path.startsWith("/control/")) {
      if (given !== control_key) await reply.code(401).send({ error: "unauthorized" });
      return;
    }
    if (!path.startsWith("/v2/") || path === "/v2/token") return;
    if (!tokenValid(credentials, given)) {
      const answer = unauthenticated();
      await reply.code(answer.status).send(answer.body);
    }
  };
}

function errorHandler(log: (message: string) => void) {
  return (
    error: Error & { statusCode?: number; validation?: unknown },
    _request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    if (error.validation) return reply.code(400).send({ error: "bad_request", message: error.message });
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ data: [], meta: { message: error.message } });
    }
    if (error.name === "AbortError") return reply.code(503).send(serverError(503).body);
    log(`airalo fake error: ${error.stack ?? error.message}`);
    return reply.code(500).send(serverError(500).body);
  };
}

// Assembles the HTTP application: conventions first (request ids, problem+json, limits,
// security headers, logs, metrics), then the service routes, the partner API under /v1 and
// the operator API under /admin. Route files only parse, authenticate and call a use case.
import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import ajvFormats from "ajv-formats";
import Fastify, {
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from "fastify";
import { sql } from "kysely";
import { auditAdminRoutes, auditRoutes } from "../audit/routes.ts";
import { inventoryLevels } from "../carrier/es2plus/inventory-alerts.ts";
import { heldCancelCount } from "../carrier/es2plus/settle-cancel.ts";
import { cartRoutes } from "../carts/routes.ts";
import { catalogAdminRoutes, catalogRoutes } from "../catalog/routes.ts";
import { consoleRoutes } from "../console/routes.ts";
import { esimRoutes } from "../esims/routes.ts";
import { carrierCallbackRoutes, esimSignalRoutes, smdpCallbackRoutes } from "../esims/signal-routes.ts";
import { eventRoutes } from "../events/routes.ts";
import { unsubscribeRoutes } from "../notifications/unsubscribe.route.ts";
import { orderAdminRoutes } from "../orders/admin-routes.ts";
import { pendingOrderIds, pendingOrders } from "../orders/order-totals.ts";
import { orderRoutes } from "../orders/routes.ts";
import { partnerAdminRoutes } from "../partners/admin-routes.ts";
import { partnerRoutes } from "../partners/routes.ts";
import { peopleAdminRoutes } from "../people/admin-routes.ts";
import { refundAdminRoutes, refundRoutes } from "../refunds/routes.ts";
import { adminTokenActor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App, AuthenticatedPartner } from "../shared/http-types.ts";
import {
  registerProblemHandlers,
  sendFrameworkError,
  sendProblem,
  writeClientError,
} from "../shared/problem.ts";
import { refuseUnknownQuery } from "../shared/query-names.ts";
import { EXPECTED_KEYWORD } from "../shared/schemas.ts";
import { refuseMalformedText } from "../shared/well-formed-text.ts";
import { supportRoutes } from "../support/routes.ts";
import { topupRoutes } from "../topups/routes.ts";
import { walletAdminRoutes, walletRoutes } from "../wallet/routes.ts";
import { webhookRoutes } from "../webhooks/routes.ts";
import { Authenticator, requireToken } from "./auth.ts";
import {
  FailureBudget,
  LookupLane,
  OVER_BUDGET_LOOKUPS_IN_FLIGHT,
  OVER_BUDGET_LOOKUPS_WAITING,
} from "./failure-budget.ts";
import {
  addProfileGauges,
  addRateLimitShareGauge,
  createMetrics,
  type Metrics,
  observeRequest,
} from "./metrics.ts";
import { RateLimiter } from "./rate-limit.ts";
import { lazyChildLoggerFactory } from "./request-logger.ts";
import { API_SECURITY_HEADERS } from "./security-headers.ts";
import { openapiOptions, serviceRoutes } from "./service-routes.ts";
import { sharedProbe } from "./shared-probe.ts";

export const BODY_LIMIT_BYTES = 64 * 1024;
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
/** The log levels at which an info line is written (pino's standard levels). */
const INFO_WRITTEN_AT: ReadonlySet<string> = new Set(["trace", "debug", "info"]);
/** While closing, idle keep-alive connections are closed this often (closeConnectionsAsTheyIdle). */
const DRAIN_IDLE_CHECK_MS = 100;

/** A domain's list of endpoints, registered on the scope (/v1 or /admin) it is given. */
export type DomainRoutes = (app: App, ctx: AppContext) => Promise<void>;

/** The partner API, mounted under /v1 behind authentication and the rate limit. */
const PARTNER_ROUTES: DomainRoutes[] = [
  catalogRoutes,
  cartRoutes,
  orderRoutes,
  refundRoutes,
  supportRoutes,
  topupRoutes,
  esimRoutes,
  walletRoutes,
  esimSignalRoutes,
  webhookRoutes,
  eventRoutes,
  auditRoutes,
  partnerRoutes,
];

/** The operator API, mounted under /admin behind ADMIN_TOKEN. */
const ADMIN_ROUTES: DomainRoutes[] = [
  partnerAdminRoutes,
  orderAdminRoutes,
  walletAdminRoutes,
  catalogAdminRoutes,
  refundAdminRoutes,
  auditAdminRoutes,
  peopleAdminRoutes,
];

export type BuiltApp = {
  app: App;
  authenticator: Authenticator;
  metrics: Metrics;
  /** The per-key limit of /v1: told how many processes share it (live-processes.ts). */
  keyLimiter: RateLimiter;
};

export type BuildOptions = {
  /** pino options or an existing logger; tests pass their own to capture lines. */
  logger?: FastifyServerOptions["logger"];
  loggerInstance?: FastifyServerOptions["loggerInstance"];
};

export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<BuiltApp> {
  const app = createFastify(ctx, options);
  const metrics = createMetrics(sharedProbe(() => pendingOrders(ctx.db, ctx.config.pending_give_up_hours)));
  const budgets = failureBudgets(ctx.config.auth_failures_per_minute);
  const authenticator = new Authenticator(ctx.db, ctx.config.app_env, { failures: budgets.api_key });
  await registerConventions(app, metrics);
  const checkDatabase = sharedProbe(() => sql`select 1`.execute(ctx.db));
  await app.register(serviceRoutes, { ctx, metrics, checkDatabase, failures: budgets.metrics_token });
  const keyLimiter = new RateLimiter(ctx.config.rate_limit_per_second, ctx.config.rate_limit_burst);
  addRateLimitShareGauge(metrics, () => keyLimiter.processes);
  if (ctx.config.carrier_profiles === "es2plus") {
    const threshold = ctx.config.profile_inventory_low_threshold;
    const levels = sharedProbe(() => inventoryLevels(ctx.pool, threshold));
    addProfileGauges(metrics, { levels, held: sharedProbe(() => heldCancelCount(ctx.pool)) }, threshold);
  }
  await registerPartnerApi(app, ctx, authenticator, keyLimiter);
  await registerAdminApi(app, ctx, budgets.admin_token);
  await registerCarrierCallbacks(app, ctx, {
    carrier: budgets.carrier_callback_token,
    smdp: budgets.es2plus_callback_token,
  });
  // Travellers' one-click unsubscribe (RFC 8058): no sign-in, the link's token is the credential;
  // in a scope of its own for the form bodies mail clients post.
  await app.register(async (scope) => unsubscribeRoutes(scope as App, ctx));
  // The web console's sign-in has budgets of its own per client address, one for partners' people
  // and one for the operator's (a password refused keeps its token). A partner's pages spend one
  // bucket of the partner's, shared by its people's sessions, as each of its API keys has one.
  const signIn = budgets.console_sign_in;
  const operatorSignIn = budgets.console_operator_sign_in;
  await consoleRoutes(
    app,
    ctx,
    {
      attempt: (ip, area, work) =>
        area === "partner" ? signIn.guardToken(ip, work) : operatorSignIn.guardToken(ip, work),
    },
    (bucket) => void keyLimiter.take(bucket),
  );
  return { app, authenticator, metrics, keyLimiter };
}

/**
 * One failed-authentication budget per surface (failure-budget.ts), each AUTH_FAILURES_PER_MINUTE per
 * client address, so junk at one surface never locks out another; one lane for the lookups of keys
 * from addresses past their budget, shared by the API and the console's sign-in.
 */
function failureBudgets(per_minute: number) {
  const lane = new LookupLane(OVER_BUDGET_LOOKUPS_IN_FLIGHT, OVER_BUDGET_LOOKUPS_WAITING);
  return {
    api_key: new FailureBudget(per_minute, "API keys", lane),
    admin_token: new FailureBudget(per_minute, "ADMIN_TOKEN", lane),
    console_sign_in: new FailureBudget(per_minute, "console sign-in", lane),
    // The operator's console sign-in apart from the partners': its token is spent before the
    // comparison, so a budget shared with made-up partner keys (free to make) locked the operator out.
    console_operator_sign_in: new FailureBudget(per_minute, "console operator sign-in", lane),
    // One per service token: a guesser at /metrics (often reachable from anywhere) must not lock out
    // the carrier's or the SM-DP+'s callbacks, whose signals are evidence (installs, downloads).
    metrics_token: new FailureBudget(per_minute, "METRICS_TOKEN", lane),
    carrier_callback_token: new FailureBudget(per_minute, "CARRIER_CALLBACK_TOKEN", lane),
    es2plus_callback_token: new FailureBudget(per_minute, "ES2PLUS_CALLBACK_TOKEN", lane),
  };
}

function createFastify(ctx: AppContext, options: BuildOptions): App {
  return Fastify({
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance }
      : { logger: options.logger ?? loggerOptions(ctx.config.log_level) }),
    bodyLimit: BODY_LIMIT_BYTES,
    // request.ip (what the failure budgets count) is the TCP peer, or behind TRUSTED_PROXIES the rightmost
    // address of X-Forwarded-For that is not a trusted proxy (Fastify's proxy-addr walks it from the
    // right). Nothing is trusted by default, so a client cannot choose its address with a header.
    trustProxy: ctx.config.trusted_proxies.length > 0 ? ctx.config.trusted_proxies : false,
    // Our own one line per request (onResponse below) replaces Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    // request.log made on the first line a request writes, not for every request (request-logger.ts).
    childLoggerFactory: lazyChildLoggerFactory,
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Type coercion would turn {"package_id": 123} into "123"; wrong types must be rejected.
    ajv: {
      // allErrors and verbose: one answer names every bad field, in words read from the failing
      // schema (field-errors.ts). The cost is bounded by the 64 KiB body and MAX_FIELD_ERRORS kept.
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        allErrors: true,
        verbose: true,
        keywords: [EXPECTED_KEYWORD],
      },
      plugins: [ajvFormats.default],
    } as unknown as FastifyServerOptions["ajv"],
    routerOptions: { maxParamLength: 200 },
    // The router's and the HTTP parser's refusals are problem+json too, not Fastify's default JSON.
    frameworkErrors: sendFrameworkError,
    clientErrorHandler: writeClientError,
    // A submit may wait one whole carrier call: the socket must outlive it, with a margin.
    connectionTimeout: ctx.config.carrier_timeout_ms + 30_000,
    keepAliveTimeout: 72_000,
    requestTimeout: ctx.config.carrier_timeout_ms + 30_000,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
}

/**
 * The drain. Fastify's close() closes the idle keep-alive connections once, as it starts, then
 * waits for every other connection to end. One whose request was still in flight stays open after
 * its answer, idle, until keepAliveTimeout (72 s), and close() waits with it: a stop with one
 * purchase in flight took 72 s. So while closing, idle connections are closed every
 * DRAIN_IDLE_CHECK_MS, and a drain lasts as long as its slowest request. No cost until then.
 */
function closeConnectionsAsTheyIdle(app: App): void {
  app.addHook("preClose", (done) => {
    // An app that never listened (tests' inject) has no connections, and no "close" event to come.
    if (!app.server.listening) return done();
    const timer = setInterval(() => app.server.closeIdleConnections(), DRAIN_IDLE_CHECK_MS);
    timer.unref();
    app.server.once("close", () => clearInterval(timer));
    done();
  });
}

/** What every response shares: problem+json errors, security headers, the OpenAPI document, one log line. */
async function registerConventions(app: App, metrics: Metrics): Promise<void> {
  app.decorateRequest("partner", null);
  app.decorateRequest("actor", null);
  app.decorateRequest("wantsBodyBytes", false);
  app.decorateRequest("bodyBytes", null);
  // Only JSON bodies: Fastify's default text/plain parser would let a string reach schema validation.
  app.removeContentTypeParser("text/plain");
  refuseMalformedText(app);
  // Before any route is registered: every route, the console's and the service routes' included.
  refuseUnknownQuery(app);
  registerProblemHandlers(app);
  closeConnectionsAsTheyIdle(app);
  // Every response carries these; set once, first, in a callback hook (no promise per request).
  app.addHook("onRequest", (request, reply, done) => {
    reply.headers(API_SECURITY_HEADERS);
    reply.header("x-request-id", request.id);
    done();
  });
  await app.register(swagger, openapiOptions());

  // A callback hook: no promise and no microtask per request.
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unknown";
    const elapsed_ms = reply.elapsedTime;
    observeRequest(metrics, request.method, route, reply.statusCode, elapsed_ms / 1000);
    // One line per request. Never the body, the query or headers: they carry keys, emails, phones.
    // Its fields are gathered only when the line is written (LOG_LEVEL info or lower).
    if (INFO_WRITTEN_AT.has(request.log.level)) {
      request.log.info(
        {
          partner_id: request.partner?.partner_id ?? null,
          method: request.method,
          route,
          status: reply.statusCode,
          duration_ms: Math.round(elapsed_ms * 10) / 10,
        },
        "request",
      );
    }
    done();
  });
}

/** The partner API under /v1: every route behind the API key and the per-key rate limit. */
async function registerPartnerApi(
  app: App,
  ctx: AppContext,
  authenticator: Authenticator,
  limiter: RateLimiter,
): Promise<void> {
  await app.register(
    async (v1) => {
      // A callback hook: a key cached here is admitted with no promise and no microtask (the hot
      // path of every cached read); only a lookup goes through the database, asynchronously.
      v1.addHook("onRequest", (request, reply, done) => {
        const cached = authenticator.cachedPartner(request);
        if (cached !== null) {
          admit(request, reply, cached, limiter);
          done();
          return;
        }
        authenticator
          .authenticate(request)
          .then((partner) => admit(request, reply, partner, limiter))
          .then(() => done(), done);
      });
      for (const routes of PARTNER_ROUTES) await routes(v1 as App, ctx);
    },
    { prefix: "/v1" },
  );
}

/** The authenticated partner takes a token from its key's bucket (429 when none is left). */
function admit(
  request: FastifyRequest,
  reply: FastifyReply,
  partner: AuthenticatedPartner,
  limiter: RateLimiter,
): void {
  // request.actor stays null: actorOf builds the key's actor when a change needs one, so a read
  // (the hot path) pays no address lookup and no allocation for it.
  request.partner = partner;
  const decision = limiter.take(partner.key_id);
  reply.header("ratelimit-limit", String(decision.limit));
  reply.header("ratelimit-remaining", String(decision.remaining));
  reply.header("ratelimit-reset", String(decision.reset_s));
}

/** The operator API under /admin, behind ADMIN_TOKEN; without one it does not exist. */
async function registerAdminApi(app: App, ctx: AppContext, failures: FailureBudget): Promise<void> {
  await app.register(
    async (admin) => {
      admin.addHook("onRequest", async (request, reply) => {
        // Without ADMIN_TOKEN the operator API does not exist: 404 exactly like an unknown route.
        if (ctx.config.admin_token === null) {
          return sendProblem(
            reply,
            new ApiError("not_found", `No route ${request.method} ${request.url.split("?")[0]}.`),
          );
        }
        requireToken(request, ctx.config.admin_token, failures, "ADMIN_TOKEN");
        // The contract: the operator token's calls are audited as {type: operator, id: admin_token}.
        request.actor = adminTokenActor(request.ip);
      });
      for (const routes of ADMIN_ROUTES) await routes(admin as App, ctx);
    },
    { prefix: "/admin" },
  );
}

/**
 * The carrier's pushed signals, outside /v1, behind CARRIER_CALLBACK_TOKEN. Checked in onRequest,
 * before the body is parsed: a stranger learns nothing of the schema, and a wrong token spends the
 * token's own per-address failure budget (each callback token and METRICS_TOKEN has one). Disabled: 404
 * like an unknown route.
 */
async function registerCarrierCallbacks(
  app: App,
  ctx: AppContext,
  failures: { carrier: FailureBudget; smdp: FailureBudget },
): Promise<void> {
  await app.register(async (callbacks) => {
    callbacks.addHook("onRequest", async (request, reply) => {
      const token = ctx.config.carrier_callback_token;
      if (!ctx.config.carrier_callbacks_enabled || token === null) {
        return sendProblem(
          reply,
          new ApiError("not_found", `No route ${request.method} ${request.url.split("?")[0]}.`),
        );
      }
      requireToken(request, token, failures.carrier, "CARRIER_CALLBACK_TOKEN");
    });
    await carrierCallbackRoutes(pendingOrderIds)(callbacks as App, ctx);
  });
  // The SM-DP+'s notifications, the same way behind ES2PLUS_CALLBACK_TOKEN; only with ES2+ profiles.
  await app.register(async (smdp) => {
    smdp.addHook("onRequest", async (request, reply) => {
      const token = ctx.config.es2plus_callback_token;
      if (ctx.config.carrier_profiles !== "es2plus" || token === null) {
        return sendProblem(
          reply,
          new ApiError("not_found", `No route ${request.method} ${request.url.split("?")[0]}.`),
        );
      }
      requireToken(request, token, failures.smdp, "ES2PLUS_CALLBACK_TOKEN");
    });
    await smdpCallbackRoutes(smdp as App, ctx);
  });
}

/** Log options: JSON lines, and error serialization that drops database details (they can echo values). */
export function loggerOptions(level: AppContext["config"]["log_level"]): FastifyServerOptions["logger"] {
  return {
    level,
    base: { service: "esim-api" },
    redact: {
      paths: ["req.headers.authorization", 'req.headers["x-api-key"]', "email", "phone"],
      censor: "[redacted]",
    },
    serializers: {
      err: (error: Error & { code?: string }) => ({
        type: error.name,
        message: error.message,
        code: error.code,
        stack: error.stack ?? "",
      }),
    },
  };
}

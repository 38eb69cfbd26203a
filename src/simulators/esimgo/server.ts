// The eSIM Go fake as an HTTP service. startEsimGoSimulator() is what both entry points use:
// main.ts runs it as a process of its own (tests), and the sandbox API may start it in-process.
// The platform's routes live under /v2.4; adapters take `${url}/v2.4` as their base URL.
import { createHash, timingSafeEqual } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type pg from "pg";
import type { FakeContext } from "./answers.ts";
import { pushCallbacks } from "./callbacks.ts";
import { type ControlPatch, DOCUMENTED_MESSAGES, FaultState, RateLimiter, type Settings } from "./faults.ts";
import { API_PREFIX, dropConnection, registerApiRoutes, registerSandboxRoutes } from "./routes.ts";
import { ensureFakeSchema } from "./schema.ts";
import { AUTH_STATUS, MESSAGES, TOKEN_COST } from "./unconfirmed.ts";

export type EsimGoSimulatorOptions = {
  pool: pg.Pool;
  /** 0: an ephemeral port; read the chosen one from `url`. */
  port: number;
  host: string;
  /** The `X-API-Key` every call must carry; also the key callbacks are signed with. */
  apiKey: string;
  log?: (message: string) => void;
  /** The organisation's first settings, used only when its row is created (first start on a database). */
  currency?: string;
  initial_balance_cents?: number;
  refunds_enabled?: boolean;
} & Partial<Settings>;

export type RunningEsimGoSimulator = {
  /** e.g. http://127.0.0.1:41234; the API base is `${url}/v2.4`. */
  url: string;
  close: () => Promise<void>;
  /** What POST /sandbox/control does, in-process. */
  control: (patch: ControlPatch) => void;
};

const BODY_LIMIT_BYTES = 256 * 1024;
const CLOSE_GRACE_MS = 3_000;
const DEFAULTS: Settings = {
  latency_ms: 0,
  rate_limit_per_second: 10,
  async_ms: 5_000,
  callback_url: null,
  signature_encoding: "base64",
};

export async function startEsimGoSimulator(options: EsimGoSimulatorOptions): Promise<RunningEsimGoSimulator> {
  if (options.apiKey.length < 8) throw new Error("the eSIM Go fake's API key must be at least 8 characters");
  await ensureFakeSchema(options.pool, {
    currency: options.currency ?? "USD",
    balance_cents: options.initial_balance_cents ?? 100_000,
    refunds_enabled: options.refunds_enabled ?? false,
  });
  const log = options.log ?? (() => undefined);
  const closing = new AbortController();
  const defined = Object.fromEntries(
    Object.entries(options).filter(([key, value]) => key in DEFAULTS && value !== undefined),
  );
  const faults = new FaultState({ ...DEFAULTS, ...defined });
  const context: FakeContext = {
    pool: options.pool,
    faults,
    notify: (events) => pushCallbacks(events, faults.settings, options.apiKey, closing.signal, log),
  };
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES, requestTimeout: 700_000 });
  app.addHook("onRequest", gate(options.apiKey, faults, closing.signal));
  app.addHook("onSend", async (_request, reply) => {
    if (closing.signal.aborted) reply.header("connection", "close");
  });
  app.setErrorHandler(errorHandler(log));
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ message: MESSAGES.not_found }));
  await app.register(async (api) => registerApiRoutes(api, context), { prefix: API_PREFIX });
  registerSandboxRoutes(app, context);
  app.get("/healthz", async () => ({ ok: true }));
  await listenOrClose(app, options.port, options.host);
  return running(app, closing, (patch) => faults.apply(patch));
}

/**
 * In front of every call: the rate limit (per client address, before anything else, with its
 * headers on every answer), the API key, then the added latency and the armed faults. The
 * sandbox's own routes are neither rate-limited nor faulted; GET /healthz needs no key.
 */
function gate(apiKey: string, faults: FaultState, closing: AbortSignal) {
  const expected = createHash("sha256").update(apiKey).digest();
  const limiter = new RateLimiter();
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0]!;
    if (path === "/healthz") return;
    const api = path.startsWith(`${API_PREFIX}/`);
    if (api) {
      const rate = limiter.take(request.ip, TOKEN_COST, faults.settings.rate_limit_per_second);
      reply.headers(rate.headers);
      if (!rate.allowed)
        return reply.code(429).header("retry-after", "1").send({ message: MESSAGES.rate_limited });
    }
    const given = request.headers["x-api-key"];
    if (typeof given !== "string" || given === "")
      return reply.code(AUTH_STATUS.missing).send({ message: MESSAGES.missing_key });
    if (!timingSafeEqual(createHash("sha256").update(given).digest(), expected)) {
      return reply.code(AUTH_STATUS.invalid).send({ message: MESSAGES.invalid_key });
    }
    if (!api) return;
    if (faults.settings.latency_ms > 0)
      await delay(faults.settings.latency_ms, undefined, { signal: closing });
    return applyFault(request, reply, faults, path.slice(API_PREFIX.length), closing);
  };
}

async function applyFault(
  request: FastifyRequest,
  reply: FastifyReply,
  faults: FaultState,
  path: string,
  closing: AbortSignal,
) {
  const fault = faults.take(request.method, path);
  if (!fault) return;
  if (fault.kind === "delay") await delay(fault.delay_ms ?? 0, undefined, { signal: closing });
  if (fault.kind === "drop") return dropConnection(request, reply);
  if (fault.kind === "error") {
    const status = fault.status ?? 500;
    if (status === 429 || status === 503) reply.header("retry-after", "1");
    return reply
      .code(status)
      .send({ message: fault.message ?? DOCUMENTED_MESSAGES[status] ?? MESSAGES.server_error });
  }
  if (fault.kind === "commit_then_500" || fault.kind === "drop_after_commit") request.afterWork = fault;
}

function errorHandler(log: (message: string) => void) {
  return (
    error: Error & { statusCode?: number; validation?: unknown },
    _request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    if (error.validation) return reply.code(400).send({ message: error.message });
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ message: error.message });
    }
    if (error.name === "AbortError") return reply.code(503).send({ message: "Service Unavailable" });
    log(`esimgo fake error: ${error.stack ?? error.message}`);
    return reply.code(500).send({ message: MESSAGES.server_error });
  };
}

async function listenOrClose(app: FastifyInstance, port: number, host: string): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    await app.close();
    throw error;
  }
}

function running(
  app: FastifyInstance,
  closing: AbortController,
  control: RunningEsimGoSimulator["control"],
): RunningEsimGoSimulator {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the eSIM Go fake has no TCP address");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    // Wake sleeping calls first so they fail fast instead of holding close() up.
    close: () => {
      closed ??= (async () => {
        closing.abort();
        const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(force);
        }
      })();
      return closed;
    },
    control,
  };
}

// The sandbox carrier as an HTTP service: Fastify, one bearer token, JSON in and out.
// startSimulator() is what both entry points use: main.ts runs it as a process of its own (tests,
// chaos runs), and the API may start it in-process for sandbox development.
import { createHash, timingSafeEqual } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type pg from "pg";
import { Type } from "typebox";
import { type SimulatorAnswer, type SimulatorContext, unavailable } from "./answers.ts";
import { CallbackPusher } from "./callbacks.ts";
import { countCancellationsSince, listCancellationsSince } from "./cancel.sql.ts";
import { CancelBody, cancelBundle, cancelProfile } from "./cancel.ts";
import { type FaultSettings, FaultSettingsPatch, initialFaults, patchFaults, roll } from "./faults.ts";
import { registerLifecycleRoutes, signalNow, startExpiryTicker } from "./lifecycle-routes.ts";
import { lookUpOutcome } from "./look-up-outcome.ts";
import { ProvisionProfileBody, profileAnswer, provisionProfile } from "./provision-profile.ts";
import { ensureSimulatorSchema } from "./schema.ts";
import {
  countSince,
  listProvisioningsSince,
  listRefusalsSince,
  listTopupsSince,
  selectProfileByIccid,
  selectTopupsByIccid,
} from "./simulator.sql.ts";
import { TopUpBody, topUp } from "./top-up.ts";

export type SimulatorOptions = {
  pool: pg.Pool;
  /** 0: an ephemeral port; read the chosen one from `url`. */
  port: number;
  host: string;
  /** The bearer token every call except GET /healthz must carry. */
  apiKey: string;
  /** Initial added latency per carrier call; POST /control changes it. */
  latency_ms: number;
  /** How long a slow call (slow@carrier.test, timeout_share) sleeps; POST /control changes it. */
  slow_ms: number;
  log?: (message: string) => void;
  /** Where signals are pushed (the service's POST /carrier/callbacks), and its token; POST /control changes them. */
  callback_url?: string | null;
  callback_token?: string | null;
  /** How often bundles whose validity ran out are ended and signalled (default 1,000 ms). */
  tick_ms?: number;
};

export type RunningSimulator = {
  url: string;
  close: () => Promise<void>;
  /** Points the pushed signals at a service (the sandbox learns its own URL only once listening). */
  setCallback: (url: string | null, token: string | null) => void;
};

/** Request bodies are a few hundred bytes; anything near this is not a carrier call. */
const BODY_LIMIT_BYTES = 16 * 1024;
const MAX_TOPUPS_PER_PROFILE = 1_000;
const MAX_AUDIT_ROWS = 100_000;
const CLOSE_GRACE_MS = 3_000;
const DEFAULT_TICK_MS = 1_000;

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  if (options.apiKey.length < 8)
    throw new Error("the carrier simulator API key must be at least 8 characters");
  await ensureSimulatorSchema(options.pool);
  let faults = initialFaults(options.latency_ms, options.slow_ms, {
    url: options.callback_url ?? null,
    token: options.callback_token ?? null,
  });
  const closing = new AbortController();
  const log = options.log ?? (() => undefined);
  const pusher = new CallbackPusher(() => faults, closing.signal, log);
  const context: SimulatorContext = {
    pool: options.pool,
    faults: () => faults,
    sleep: (ms) => (ms > 0 ? delay(ms, undefined, { signal: closing.signal }) : Promise.resolve()),
    signal: (iccid) => {
      // With no callback URL (the default) the snapshot would be read for nothing: a statement
      // per top-up. The simulate route still reads it through signalNow: it answers it.
      if (!pusher.accepting()) return;
      signalNow(options.pool, pusher, iccid).catch((error: unknown) =>
        log(`signal: ${(error as Error).message}`),
      );
    },
  };
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT_BYTES, requestTimeout: 700_000 });
  app.addHook("onRequest", authenticate(options.apiKey));
  // While closing, end each keep-alive connection after its answer: the server only finishes
  // closing once no connection is left, and a caller's idle keep-alive socket would hold it open.
  app.addHook("onSend", async (_request, reply) => {
    if (closing.signal.aborted) reply.header("connection", "close");
  });
  app.setErrorHandler(errorHandler(options.log));
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: "not_found" }));
  registerCarrierRoutes(app, context);
  registerLifecycleRoutes(app, context, pusher, (work) => underNetworkFaults(context, work));
  const stopTicker = startExpiryTicker(options.pool, pusher, options.tick_ms ?? DEFAULT_TICK_MS, log);
  registerSandboxRoutes(app, context, {
    get: () => faults,
    set: (next) => {
      faults = next;
      options.log?.(`carrier simulator faults: ${JSON.stringify(faults)}`);
    },
  });

  await listenOrClose(app, options.port, options.host);
  return runningSimulator(app, closing, stopTicker, (url, token) => {
    faults = { ...faults, callback_url: url, callback_token: token };
  });
}

async function listenOrClose(app: FastifyInstance, port: number, host: string): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** The handle of a listening simulator: its URL, an idempotent close, and the callback setter. */
function runningSimulator(
  app: FastifyInstance,
  closing: AbortController,
  stopTicker: () => void,
  setCallback: RunningSimulator["setCallback"],
): RunningSimulator {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("simulator has no TCP address");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    // Wake sleeping calls first (they fail fast instead of holding close() for slow_ms).
    close: () => {
      closed ??= (async () => {
        stopTicker();
        closing.abort();
        // The last resort for a connection that neither answers nor goes idle in time.
        const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(force);
        }
      })();
      return closed;
    },
    setCallback,
  };
}

/** What a real carrier does: the protocol calls, under the injected network faults. */
function registerCarrierRoutes(app: FastifyInstance, context: SimulatorContext): void {
  app.post<{ Body: ProvisionProfileBody }>(
    "/profiles",
    { schema: { body: ProvisionProfileBody } },
    (request, reply) =>
      send(
        reply,
        underNetworkFaults(context, () => provisionProfile(context, request.body)),
      ),
  );
  app.post<{ Body: TopUpBody }>("/topups", { schema: { body: TopUpBody } }, (request, reply) =>
    send(
      reply,
      underNetworkFaults(context, () => topUp(context, request.body)),
    ),
  );
  for (const [path, cancel] of [
    ["/profiles/cancel", cancelProfile],
    ["/bundles/cancel", cancelBundle],
  ] as const) {
    app.post<{ Body: CancelBody }>(path, { schema: { body: CancelBody } }, (request, reply) =>
      send(
        reply,
        underNetworkFaults(context, () => cancel(context, request.body)),
      ),
    );
  }
  const ReferenceParams = Type.Object({ reference: Type.String({ minLength: 1, maxLength: 128 }) });
  app.get<{ Params: { reference: string } }>(
    "/outcomes/:reference",
    { schema: { params: ReferenceParams } },
    (request, reply) =>
      send(
        reply,
        underNetworkFaults(context, () => lookUpOutcome(context.pool, request.params.reference)),
      ),
  );
}

/** What only a sandbox offers: inspection for tests and audits, fault control, health. */
function registerSandboxRoutes(
  app: FastifyInstance,
  context: SimulatorContext,
  faults: { get: () => FaultSettings; set: (next: FaultSettings) => void },
): void {
  const IccidParams = Type.Object({ iccid: Type.String({ pattern: "^[0-9]{1,32}$" }) });
  app.get<{ Params: { iccid: string } }>(
    "/profiles/:iccid",
    { schema: { params: IccidParams } },
    (request, reply) => describeProfile(context.pool, request.params.iccid, reply),
  );
  const AuditQuery = Type.Object({
    since: Type.Optional(Type.String({ maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AUDIT_ROWS })),
  });
  app.get<{ Querystring: { since?: string; limit?: number } }>(
    "/audit",
    { schema: { querystring: AuditQuery } },
    (request, reply) => audit(context.pool, request.query, reply),
  );
  app.get("/control", async () => faults.get());
  app.post<{ Body: FaultSettingsPatch }>(
    "/control",
    { schema: { body: FaultSettingsPatch } },
    async (request) => {
      faults.set(patchFaults(faults.get(), request.body));
      return faults.get();
    },
  );
  app.get("/healthz", async () => ({ ok: true }));
}

/**
 * The faults a network and a struggling carrier produce, before the carrier looks at the request:
 * down and fail_share answer 503 having done nothing; timeout_share sleeps slow_ms and then does
 * the work anyway, so the caller (whose timeout fired) must find the result by asking again.
 */
async function underNetworkFaults(
  context: SimulatorContext,
  work: () => Promise<SimulatorAnswer>,
): Promise<SimulatorAnswer> {
  if (context.faults().down) return unavailable("carrier is down (injected: down)");
  await context.sleep(context.faults().latency_ms);
  if (roll(context.faults().fail_share)) return unavailable("carrier failed (injected: fail_share)");
  if (roll(context.faults().timeout_share)) await context.sleep(context.faults().slow_ms);
  return work();
}

async function send(reply: FastifyReply, answer: Promise<SimulatorAnswer>): Promise<FastifyReply> {
  const { status, body } = await answer;
  return reply.code(status).send(body);
}

async function describeProfile(pool: pg.Pool, iccid: string, reply: FastifyReply): Promise<FastifyReply> {
  const profile = await selectProfileByIccid(pool, iccid);
  if (!profile) return reply.code(404).send({ error: "not_found" });
  const topups = await selectTopupsByIccid(pool, iccid, MAX_TOPUPS_PER_PROFILE);
  return reply.send({ ...profile, ...profileAnswer(profile), topups });
}

async function audit(
  pool: pg.Pool,
  query: { since?: string; limit?: number },
  reply: FastifyReply,
): Promise<FastifyReply> {
  const since = new Date(query.since ?? 0);
  if (Number.isNaN(since.getTime())) return reply.code(400).send({ error: "bad_request", message: "since" });
  const limit = query.limit ?? MAX_AUDIT_ROWS;
  const [counts, provisionings, topups, refusals, cancelled, cancellations] = await Promise.all([
    countSince(pool, since),
    listProvisioningsSince(pool, since, limit),
    listTopupsSince(pool, since, limit),
    listRefusalsSince(pool, since, limit),
    countCancellationsSince(pool, since),
    listCancellationsSince(pool, since, limit),
  ]);
  const truncated =
    provisionings.length < counts.provisionings ||
    topups.length < counts.topups ||
    refusals.length < counts.refusals ||
    cancellations.length < cancelled;
  return reply.send({
    counts: { ...counts, cancellations: cancelled },
    truncated,
    provisionings,
    topups,
    refusals,
    cancellations,
  });
}

function authenticate(apiKey: string) {
  // Compare digests so the comparison takes the same time whatever the token's length.
  const expected = createHash("sha256").update(apiKey).digest();
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.url.split("?")[0] === "/healthz") return;
    const header = request.headers.authorization ?? "";
    const token = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
    const given = createHash("sha256").update(token).digest();
    if (!timingSafeEqual(given, expected)) {
      await reply.code(401).header("www-authenticate", "Bearer").send({ error: "unauthorized" });
    }
  };
}

function errorHandler(log: ((message: string) => void) | undefined) {
  return (
    error: Error & { statusCode?: number; validation?: unknown },
    _request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    if (error.validation) return reply.code(400).send({ error: "bad_request", message: error.message });
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ error: "bad_request", message: error.message });
    }
    // A database failure or a shutdown: to the caller it is an outage, an unknown outcome.
    // A sleep cut short by close() is expected and not worth a log line.
    if (error.name === "AbortError") {
      return reply.code(503).send({ error: "unavailable", reason: "carrier simulator shutting down" });
    }
    log?.(`carrier simulator error: ${error.stack ?? error.message}`);
    return reply.code(503).send({ error: "unavailable", reason: "internal error" });
  };
}

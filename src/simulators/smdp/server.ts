// The SM-DP+ simulator as an HTTPS service with mutual TLS: it speaks ES2+ (SGP.22 JSON binding)
// to the operator, pushes HandleDownloadProgressInfo back, and offers a sandbox control API
// (profile loading, device events, faults, audit) on the same authenticated port.
import { setTimeout as delay } from "node:timers/promises";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import type pg from "pg";
import { ES2PLUS_CODES as CODE, ES2PLUS_SHAPES } from "../../protocols/es2plus.ts";
import { registerControlRoutes } from "./control-routes.ts";
import type { SmdpFaults } from "./faults.ts";
import {
  cancelOrder,
  confirmOrder,
  downloadOrder,
  type Es2Context,
  type Es2Result,
  failed,
  releaseProfile,
} from "./functions.ts";
import { Notifier } from "./notifier.ts";
import { ensureSmdpSchema } from "./schema.ts";

export type SmdpSimulatorOptions = {
  pool: pg.Pool;
  port: number;
  host: string;
  /** PEM: this server's certificate and key, and the CA its clients' certificates must chain to. */
  tls: { cert: string; key: string; ca: string };
  /** The functionRequesterIdentifier it serves (the operator's); others get 1.1/1.1. */
  requester_id: string;
  /** Its own address, answered in ConfirmOrder (smdpAddress) and put in activation codes. */
  smdp_address: string;
  log?: (message: string) => void;
  callback_url?: string | null;
  callback_token?: string | null;
};

export type RunningSmdpSimulator = {
  url: string;
  close: () => Promise<void>;
  /** Where HandleDownloadProgressInfo goes (the sandbox API learns its own URL only once listening). */
  setCallback: (url: string | null, token: string | null) => void;
};

const BODY_LIMIT_BYTES = 16 * 1024;
type Perform = (pool: pg.Pool, body: Record<string, unknown>, context: Es2Context) => Promise<Es2Result>;
const FUNCTIONS: Record<Exclude<keyof typeof ES2PLUS_SHAPES, "handleDownloadProgressInfo">, Perform> = {
  downloadOrder,
  confirmOrder,
  cancelOrder,
  releaseProfile,
};

export async function startSmdpSimulator(options: SmdpSimulatorOptions): Promise<RunningSmdpSimulator> {
  await ensureSmdpSchema(options.pool);
  let faults: SmdpFaults = {
    down: false,
    latency_ms: 0,
    fail_share: 0,
    drop_share: 0,
    bad_header_share: 0,
    functions: null,
    download_taken_reason: "3.3",
    callback_url: options.callback_url ?? null,
    callback_token: options.callback_token ?? null,
    callback_duplicate_share: 0,
  };
  const closing = new AbortController();
  const notifier = new Notifier(
    () => faults,
    "smdp-simulator",
    closing.signal,
    options.log ?? (() => undefined),
  );
  const app = Fastify({
    https: { ...options.tls, requestCert: true, rejectUnauthorized: true, minVersion: "TLSv1.2" },
    bodyLimit: BODY_LIMIT_BYTES,
    logger: false,
  });
  app.addContentTypeParser(/^application\/json/, { parseAs: "string" }, (_request, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(null, undefined);
    }
  });
  for (const [name, perform] of Object.entries(FUNCTIONS)) {
    const context = () => ({
      smdp_address: options.smdp_address,
      download_taken_reason: faults.download_taken_reason,
    });
    app.post(ES2PLUS_SHAPES[name as keyof typeof FUNCTIONS].path, (request, reply) =>
      es2Call(
        request,
        reply,
        name,
        () => faults,
        (body) => perform(options.pool, body, context()),
        options,
      ),
    );
  }
  registerControlRoutes(app, options.pool, {
    faults: () => faults,
    setFaults: (next) => {
      faults = next;
    },
    notifier,
  });
  app.get("/healthz", async () => ({ ok: true }));
  await app.listen({ port: options.port, host: options.host });
  const address = app.server.address() as { port: number };
  return {
    url: `https://${options.host}:${address.port}`,
    close: async () => {
      closing.abort();
      await app.close();
    },
    setCallback: (callback_url, callback_token) => {
      faults = { ...faults, callback_url, callback_token };
    },
  };
}

const roll = (share: number, fn: string, faults: SmdpFaults) =>
  share > 0 &&
  (faults.functions === null || faults.functions.length === 0 || faults.functions.includes(fn)) &&
  Math.random() < share;

async function es2Call(
  request: FastifyRequest,
  reply: FastifyReply,
  fn: string,
  faults: () => SmdpFaults,
  perform: (body: Record<string, unknown>) => Promise<Es2Result>,
  options: SmdpSimulatorOptions,
): Promise<FastifyReply> {
  if (faults().down) return reply.code(503).send({ error: "down" });
  if (faults().latency_ms > 0) await delay(faults().latency_ms);
  if (roll(faults().fail_share, fn, faults())) return reply.code(500).send({ error: "injected" });
  const protocol = String(request.headers["x-admin-protocol"] ?? "");
  if (!protocol.startsWith("gsma/rsp/v2.")) return reply.code(400).send({ error: "X-Admin-Protocol" });
  const body = request.body as Record<string, unknown> | undefined;
  const result = await checkHeader(body, options.requester_id, () => perform(body!));
  if (roll(faults().drop_share, fn, faults())) {
    // Commit-then-drop: the work is done and committed; the caller never hears of it.
    request.raw.socket.destroy();
    return reply;
  }
  const header =
    result.status === "Executed-Success"
      ? { functionExecutionStatus: { status: result.status } }
      : {
          functionExecutionStatus: {
            status: result.status,
            statusCodeData: {
              subjectCode: result.subjectCode,
              reasonCode: result.reasonCode,
              message: result.message,
            },
          },
        };
  const bad = roll(faults().bad_header_share, fn, faults());
  return reply
    .code(200)
    .header("x-admin-protocol", bad ? "gsma/rsp/v1.0.0" : "gsma/rsp/v2.2.0")
    .header("content-type", "application/json;charset=UTF-8")
    .send({ header, ...(result.status === "Executed-Success" ? result.fields : {}) });
}

async function checkHeader(
  body: Record<string, unknown> | undefined,
  requester_id: string,
  perform: () => Promise<Es2Result>,
): Promise<Es2Result> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return failed(CODE.invalid, "body is not a JSON object");
  const header = body.header as Record<string, unknown> | undefined;
  if (typeof header !== "object" || header === null) return failed(CODE.missing, "header is missing");
  if (typeof header.functionCallIdentifier !== "string" || header.functionCallIdentifier === "") {
    return failed(CODE.missing, "functionCallIdentifier is missing");
  }
  if (header.functionRequesterIdentifier !== requester_id)
    return failed(CODE.requesterUnknown, "unknown function requester");
  return perform();
}

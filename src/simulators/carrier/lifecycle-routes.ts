// The simulator's lifecycle endpoints: GET /esims/:iccid (a carrier call: the pull side, under the
// network faults), POST /sandbox/esims/:iccid/simulate (the control API: what a device does), and
// the ticker that ends bundles whose validity ran out. Every change is signalled through the
// callback pusher after it commits, like a real carrier's notification.
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import { Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import type { SimulatedEvent } from "../../protocols/carrier-api.ts";
import { ok, type SimulatorAnswer, type SimulatorContext } from "./answers.ts";
import type { CallbackPusher } from "./callbacks.ts";
import { lockProfileState, selectIccidsWithLapsedBundles } from "./lifecycle.sql.ts";
import { advance, applySimulatedEvent, snapshot } from "./lifecycle.ts";

const IccidParams = Type.Object({ iccid: Type.String({ pattern: "^[0-9]{1,32}$" }) });
const SimulateBody = Type.Object(
  {
    event: Type.Union([
      Type.Literal("install"),
      Type.Literal("use_data"),
      Type.Literal("expire"),
      Type.Literal("delete"),
    ]),
    data_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  },
  { additionalProperties: false },
);
/** eSIMs the ticker ends per tick; the rest wait for the next one. */
const MAX_LAPSED_PER_TICK = 100;

const NOT_FOUND: SimulatorAnswer = { status: 404, body: { error: "not_found" } };

export function registerLifecycleRoutes(
  app: FastifyInstance,
  context: SimulatorContext,
  pusher: CallbackPusher,
  underNetworkFaults: (work: () => Promise<SimulatorAnswer>) => Promise<SimulatorAnswer>,
): void {
  app.get<{ Params: { iccid: string } }>(
    "/esims/:iccid",
    { schema: { params: IccidParams } },
    async (request, reply) => {
      const answer = await underNetworkFaults(() => currentState(context.pool, request.params.iccid));
      return reply.code(answer.status).send(answer.body);
    },
  );
  app.post<{ Params: { iccid: string }; Body: SimulatedEvent }>(
    "/sandbox/esims/:iccid/simulate",
    { schema: { params: IccidParams, body: SimulateBody } },
    async (request, reply) => {
      if (request.body.event === "use_data" && request.body.data_mb === undefined) {
        return reply.code(400).send({ error: "bad_request", message: "use_data needs data_mb" });
      }
      const answer = await simulate(context.pool, pusher, request.params.iccid, request.body);
      return reply.code(answer.status).send(answer.body);
    },
  );
}

/** Applies what time did, then reads the eSIM; signals it when time changed something. */
async function currentState(pool: pg.Pool, iccid: string): Promise<SimulatorAnswer> {
  const now = new Date();
  const found = await inTransaction(pool, async (client) => {
    const profile = await lockProfileState(client, iccid);
    if (profile) await advance(client, profile, now);
    return profile !== null;
  });
  const signal = found ? await snapshot(pool, iccid, now) : null;
  return signal ? ok(signal) : NOT_FOUND;
}

async function simulate(
  pool: pg.Pool,
  pusher: CallbackPusher,
  iccid: string,
  event: SimulatedEvent,
): Promise<SimulatorAnswer> {
  const now = new Date();
  const outcome = await inTransaction(pool, (client) => applySimulatedEvent(client, iccid, event, now));
  if (outcome.kind === "not_found") return NOT_FOUND;
  return signalNow(pool, pusher, iccid, now);
}

/** Reads the committed state and pushes it; answers it too. */
export async function signalNow(
  pool: pg.Pool,
  pusher: CallbackPusher,
  iccid: string,
  now = new Date(),
): Promise<SimulatorAnswer> {
  const signal = await snapshot(pool, iccid, now);
  if (!signal) return NOT_FOUND;
  pusher.push(signal);
  return ok(signal);
}

/** Every `tick_ms`: bundles whose validity ran out end (the next starts), and the change is signalled. */
export function startExpiryTicker(
  pool: pg.Pool,
  pusher: CallbackPusher,
  tick_ms: number,
  log: (message: string) => void,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    endLapsedBundles(pool, pusher)
      .catch((error: unknown) => log(`carrier simulator ticker: ${(error as Error).message}`))
      .finally(() => {
        running = false;
      });
  }, tick_ms);
  timer.unref();
  return () => clearInterval(timer);
}

async function endLapsedBundles(pool: pg.Pool, pusher: CallbackPusher): Promise<void> {
  const now = new Date();
  const iccids = await selectIccidsWithLapsedBundles(pool, now, MAX_LAPSED_PER_TICK);
  for (const iccid of iccids) {
    await inTransaction(pool, async (client) => {
      const profile = await lockProfileState(client, iccid);
      if (profile) await advance(client, profile, now);
    });
    // Nobody to tell (no callback URL): the snapshot is not read.
    if (pusher.accepting()) await signalNow(pool, pusher, iccid, now);
  }
}

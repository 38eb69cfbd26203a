// The SM-DP+ simulator's sandbox control API (not ES2+): load profiles, play a device's events,
// set faults, read the audit. Same mutual-TLS port as the ES2+ functions.
import type { FastifyInstance } from "fastify";
import type pg from "pg";
import { Type } from "typebox";
import { iccidRange, MAX_RANGE_COUNT } from "../../lib/iccid-range.ts";
import { DEVICE_EVENTS, type DeviceEvent, deviceEvent } from "./device-events.ts";
import { FaultsPatch, type SmdpFaults } from "./faults.ts";
import type { Notifier } from "./notifier.ts";
import { auditProfiles, loadProfiles, selectProfile } from "./profiles.sql.ts";

const MAX_AUDIT_ROWS = 100_000;

const LoadBody = Type.Object(
  {
    profile_type: Type.String({ minLength: 1, maxLength: 64 }),
    first_iccid: Type.String({ pattern: "^89[0-9]{17,18}$" }),
    count: Type.Integer({ minimum: 1, maximum: MAX_RANGE_COUNT }),
  },
  { additionalProperties: false },
);
const EventBody = Type.Object(
  { event: Type.Union(DEVICE_EVENTS.map((event) => Type.Literal(event))) },
  { additionalProperties: false },
);
const IccidParams = Type.Object({ iccid: Type.String({ pattern: "^[0-9]{19,20}F?$" }) });

export function registerControlRoutes(
  app: FastifyInstance,
  pool: pg.Pool,
  state: { faults: () => SmdpFaults; setFaults: (next: SmdpFaults) => void; notifier: Notifier },
): void {
  app.post<{ Body: { profile_type: string; first_iccid: string; count: number } }>(
    "/sandbox/profiles",
    { schema: { body: LoadBody } },
    async (request, reply) => {
      let iccids: string[];
      try {
        iccids = iccidRange(request.body.first_iccid, request.body.count);
      } catch (error) {
        return reply.code(400).send({ error: "bad_request", message: (error as Error).message });
      }
      return { loaded: await loadProfiles(pool, request.body.profile_type, iccids) };
    },
  );
  app.get<{ Params: { iccid: string } }>(
    "/sandbox/profiles/:iccid",
    { schema: { params: IccidParams } },
    async (request, reply) => {
      const profile = await selectProfile(pool, request.params.iccid.replace(/F$/, ""));
      return profile ?? reply.code(404).send({ error: "not_found" });
    },
  );
  app.post<{ Params: { iccid: string }; Body: { event: DeviceEvent } }>(
    "/sandbox/profiles/:iccid/events",
    { schema: { params: IccidParams, body: EventBody } },
    async (request, reply) => {
      const outcome = await deviceEvent(pool, request.params.iccid.replace(/F$/, ""), request.body.event);
      if (outcome.kind === "not_found") return reply.code(404).send({ error: "not_found" });
      if (outcome.kind === "illegal") {
        return reply.code(409).send({ error: "illegal_transition", state: outcome.state });
      }
      state.notifier.push(outcome.profile, outcome.notifications);
      return outcome.profile;
    },
  );
  app.get("/control", async () => state.faults());
  app.post<{ Body: Partial<SmdpFaults> }>("/control", { schema: { body: FaultsPatch } }, async (request) => {
    const defined = Object.entries(request.body).filter(([, value]) => value !== undefined);
    state.setFaults({ ...state.faults(), ...Object.fromEntries(defined) });
    return state.faults();
  });
  app.get<{ Querystring: { limit?: number } }>(
    "/audit",
    {
      schema: {
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AUDIT_ROWS })),
        }),
      },
    },
    async (request) => auditProfiles(pool, request.query.limit ?? MAX_AUDIT_ROWS),
  );
}

// POST /profiles: provision an eSIM profile, idempotent by our caller's reference.
// A known reference gets its recorded answer (the same profile, or the same refusal) before any
// magic value or injected refusal is considered, so asking again never changes the outcome. The
// decision and its records are one call of carrier_sim.provision_profile (schema.ts), under the
// reference's lock: one round trip instead of ten.
import type pg from "pg";
import { type Static, Type } from "typebox";
import {
  badRequest,
  magicValue,
  ok,
  refused,
  type SimulatorAnswer,
  type SimulatorContext,
  sandboxPrelude,
} from "./answers.ts";
import { iccidFromSerial, newMatchingId, SMDP_ADDRESS } from "./inventory.ts";
import {
  nextIccidSerials,
  type ProfileRow,
  provisionInOneCall,
  selectProfileByReference,
  selectRefusal,
} from "./simulator.sql.ts";

export const Reference = Type.String({ minLength: 1, maxLength: 200 });
export const EndUserEmail = Type.String({ minLength: 3, maxLength: 320 });
export const DataMb = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()]);
export const ValidityDays = Type.Integer({ minimum: 1, maximum: 3650 });

export const ProvisionProfileBody = Type.Object(
  {
    reference: Reference,
    external_package_id: Type.String({ minLength: 1, maxLength: 200 }),
    data_mb: DataMb,
    validity_days: ValidityDays,
    start_date: Type.Union([Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$" }), Type.Null()]),
    end_user_email: EndUserEmail,
    // A profile prepared by the SM-DP+ (the service's CARRIER_PROFILES=es2plus): the bundle system
    // records that ICCID and attaches the plan to it instead of taking one of its own.
    profile: Type.Optional(
      Type.Object(
        {
          iccid: Type.String({ pattern: "^89[0-9]{17,18}$" }),
          smdp_address: Type.String({ minLength: 1, maxLength: 253 }),
          matching_id: Type.String({ pattern: "^[0-9A-Z-]{1,64}$" }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ProvisionProfileBody = Static<typeof ProvisionProfileBody>;

export function profileAnswer(profile: ProfileRow) {
  return {
    iccid: profile.iccid,
    smdp_address: profile.smdp_address,
    activation_code: profile.matching_id,
  };
}

export async function provisionProfile(
  context: SimulatorContext,
  request: ProvisionProfileBody,
): Promise<SimulatorAnswer> {
  if (request.start_date !== null && !isCalendarDate(request.start_date)) {
    return badRequest(`start_date ${request.start_date} is not a calendar date`);
  }
  // A magic email may answer before any record is made (unavailable, after a sleep): a known
  // reference's recorded answer comes first. Otherwise the prelude only draws a refusal, which the
  // recorded answer overrides under the lock anyway, so no look-up is needed before it.
  if (magicValue(request.end_user_email) !== null) {
    const known = await recordedAnswer(context.pool, request.reference);
    if (known) return known;
  }
  const prelude = await sandboxPrelude(context, request.end_user_email);
  if ("answer" in prelude) return prelude.answer;

  const given = request.profile;
  // One round trip: the lock, the recorded answer, or the refusal or the new profile and its bundle.
  const outcome = await provisionInOneCall(context.pool, {
    reference: request.reference,
    iccid: given?.iccid ?? iccidFromSerial(await takeSerial(context.pool)),
    matching_id: given?.matching_id ?? newMatchingId(),
    smdp_address: given?.smdp_address ?? SMDP_ADDRESS,
    external_package_id: request.external_package_id,
    data_mb_total: request.data_mb,
    validity_days: request.validity_days,
    start_date: request.start_date,
    end_user_email: request.end_user_email,
    refusal: prelude.refusal,
  });
  if (outcome.kind === "refused") return refused(outcome.reason);
  return ok({
    iccid: outcome.iccid,
    smdp_address: outcome.smdp_address,
    activation_code: outcome.matching_id,
  });
}

async function recordedAnswer(db: pg.Pool, reference: string): Promise<SimulatorAnswer | null> {
  const profile = await selectProfileByReference(db, reference);
  if (profile) return ok(profileAnswer(profile));
  const refusal = await selectRefusal(db, reference);
  if (refusal) return refused(refusal.reason);
  return null;
}

/** Serials drawn from the sequence this many at a time, per database: one statement per batch. */
const SERIAL_BATCH = 64;
const serials = new WeakMap<pg.Pool, { left: number[]; refill: Promise<void> | null }>();

/**
 * The next unused serial of the inventory range. A serial drawn and never used (a retry answered
 * from its record, a process that stops) is a gap in the range, never an ICCID handed out twice.
 */
async function takeSerial(pool: pg.Pool): Promise<number> {
  let batch = serials.get(pool);
  if (!batch) {
    batch = { left: [], refill: null };
    serials.set(pool, batch);
  }
  while (batch.left.length === 0) {
    batch.refill ??= nextIccidSerials(pool, SERIAL_BATCH)
      .then((drawn) => {
        batch.left.push(...drawn);
      })
      .finally(() => {
        batch.refill = null;
      });
    await batch.refill;
  }
  return batch.left.shift()!;
}

/** The schema checks the YYYY-MM-DD shape; this rejects 2025-02-30, which PostgreSQL would too. */
function isCalendarDate(text: string): boolean {
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === text;
}

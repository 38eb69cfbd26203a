// POST /profiles: provision an eSIM profile, idempotent by our caller's reference.
// A known reference gets its recorded answer (the same profile, or the same refusal) before any
// magic value or injected refusal is considered, so asking again never changes the outcome.
import { type Static, Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import {
  badRequest,
  ok,
  refused,
  type SimulatorAnswer,
  type SimulatorContext,
  sandboxPrelude,
} from "./answers.ts";
import { iccidFromSerial, newMatchingId, SMDP_ADDRESS } from "./inventory.ts";
import { insertBundle } from "./lifecycle.sql.ts";
import {
  insertProfile,
  insertRefusal,
  lockReference,
  nextIccidSerial,
  type ProfileRow,
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
  const known = await recordedAnswer(context.pool, request.reference);
  if (known) return known;

  const prelude = await sandboxPrelude(context, request.end_user_email);
  if ("answer" in prelude) return prelude.answer;
  const { refusal } = prelude;

  return inTransaction(context.pool, async (client) => {
    await lockReference(client, request.reference);
    // Another call for this reference may have decided while this one slept or waited on the lock.
    const decided = await recordedAnswer(client, request.reference);
    if (decided) return decided;
    if (refusal !== null) {
      await insertRefusal(client, { reference: request.reference, kind: "profile", reason: refusal });
      return refused(refusal);
    }
    const profile = await insertNewProfile(client, request);
    return ok(profileAnswer(profile));
  });
}

async function recordedAnswer(
  db: Parameters<typeof selectProfileByReference>[0],
  reference: string,
): Promise<SimulatorAnswer | null> {
  const profile = await selectProfileByReference(db, reference);
  if (profile) return ok(profileAnswer(profile));
  const refusal = await selectRefusal(db, reference);
  if (refusal) return refused(refusal.reason);
  return null;
}

async function insertNewProfile(
  client: Parameters<typeof insertProfile>[0],
  request: ProvisionProfileBody,
): Promise<ProfileRow> {
  const given = request.profile;
  const inserted = await insertProfile(client, {
    reference: request.reference,
    iccid: given?.iccid ?? iccidFromSerial(await nextIccidSerial(client)),
    matching_id: given?.matching_id ?? newMatchingId(),
    smdp_address: given?.smdp_address ?? SMDP_ADDRESS,
    external_package_id: request.external_package_id,
    data_mb_total: request.data_mb,
    validity_days: request.validity_days,
    start_date: request.start_date,
    end_user_email: request.end_user_email,
  });
  // The reference lock makes a conflict impossible here; `on conflict do nothing` is the second
  // line of defence, and if it ever fires the existing profile is the answer.
  const profile = inserted ?? (await selectProfileByReference(client, request.reference));
  if (!profile) throw new Error(`profile for reference ${request.reference} neither inserted nor found`);
  // The original bundle, queued until the first data use (README "Lifecycle").
  await insertBundle(client, {
    reference: request.reference,
    iccid: profile.iccid,
    data_mb: request.data_mb,
    validity_days: request.validity_days,
  });
  return profile;
}

/** The schema checks the YYYY-MM-DD shape; this rejects 2025-02-30, which PostgreSQL would too. */
function isCalendarDate(text: string): boolean {
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === text;
}

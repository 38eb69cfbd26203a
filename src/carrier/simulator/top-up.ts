// POST /topups: add data to a provisioned profile, exactly once per reference.
// Same shape as provisioning: a known reference gets its recorded answer first; the data is
// added in the same transaction that records the top-up, so a retry can never add it twice.
import { type Static, Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import { ok, refused, type SimulatorAnswer, type SimulatorContext, sandboxPrelude } from "./answers.ts";
import { insertBundle, lockProfileState } from "./lifecycle.sql.ts";
import { advance } from "./lifecycle.ts";
import { DataMb, EndUserEmail, Reference, ValidityDays } from "./provision-profile.ts";
import {
  addDataToProfile,
  insertRefusal,
  insertTopup,
  lockReference,
  selectProfileByIccid,
  selectProfileForUpdate,
  selectRefusal,
  selectTopupByReference,
} from "./simulator.sql.ts";

export const TopUpBody = Type.Object(
  {
    reference: Reference,
    iccid: Type.String({ minLength: 1, maxLength: 32 }),
    external_package_id: Type.String({ minLength: 1, maxLength: 200 }),
    data_mb: DataMb,
    validity_days: ValidityDays,
    end_user_email: EndUserEmail,
  },
  { additionalProperties: false },
);
export type TopUpBody = Static<typeof TopUpBody>;

export async function topUp(context: SimulatorContext, request: TopUpBody): Promise<SimulatorAnswer> {
  const known = await recordedAnswer(context.pool, request.reference);
  if (known) return known;

  const prelude = await sandboxPrelude(context, request.end_user_email);
  if ("answer" in prelude) return prelude.answer;
  const { refusal } = prelude;

  const answer = await inTransaction(context.pool, async (client) => {
    await lockReference(client, request.reference);
    const decided = await recordedAnswer(client, request.reference);
    if (decided) return decided;
    const profile = await selectProfileForUpdate(client, request.iccid);
    const reason =
      profile === null
        ? `unknown iccid ${request.iccid}`
        : profile.cancelled_at !== null
          ? `profile ${request.iccid} was cancelled`
          : refusal;
    if (reason !== null) {
      await insertRefusal(client, { reference: request.reference, kind: "topup", reason });
      return refused(reason);
    }
    const inserted = await insertTopup(client, {
      reference: request.reference,
      iccid: request.iccid,
      external_package_id: request.external_package_id,
      data_mb: request.data_mb,
      validity_days: request.validity_days,
    });
    // Under the reference lock the insert cannot conflict; if it somehow did, the data was
    // already added by the call that inserted it, so adding it here would count it twice.
    if (inserted === null) throw new Error(`top-up ${request.reference} appeared under its own lock`);
    const data_mb_total = await addDataToProfile(client, request.iccid, request.data_mb);
    // The new bundle queues behind the running one; if the eSIM's bundles have all ended, it starts now.
    await insertBundle(client, request);
    const state = await lockProfileState(client, request.iccid);
    if (state) await advance(client, state, new Date());
    return ok({ iccid: request.iccid, data_mb_total });
  });
  if (answer.status === 200) context.signal(request.iccid);
  return answer;
}

async function recordedAnswer(
  db: Parameters<typeof selectTopupByReference>[0],
  reference: string,
): Promise<SimulatorAnswer | null> {
  const topup = await selectTopupByReference(db, reference);
  if (topup) {
    const profile = await selectProfileByIccid(db, topup.iccid);
    return ok({ iccid: topup.iccid, data_mb_total: profile?.data_mb_total ?? null });
  }
  const refusal = await selectRefusal(db, reference);
  if (refusal) return refused(refusal.reason);
  return null;
}

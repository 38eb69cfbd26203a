// POST /topups: add data to a provisioned profile, exactly once per reference.
// Same shape as provisioning: a known reference gets its recorded answer first; the data is
// added in the same transaction that records the top-up, so a retry can never add it twice. The
// answer and the records are one call of carrier_sim.top_up (schema.ts); time is applied to the
// bundles after it, in the same transaction: three round trips instead of seven.
import { type Static, Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import {
  magicValue,
  ok,
  refused,
  type SimulatorAnswer,
  type SimulatorContext,
  sandboxPrelude,
} from "./answers.ts";
import { advance } from "./lifecycle.ts";
import { DataMb, EndUserEmail, Reference, ValidityDays } from "./provision-profile.ts";
import { selectTopupAnswer, topUpInOneCall } from "./simulator.sql.ts";

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
  // As for a provisioning: only a magic email can answer before the recorded answer is read under
  // the lock; otherwise the prelude only draws a refusal, which a recorded answer overrides.
  if (magicValue(request.end_user_email) !== null) {
    const known = await recordedAnswer(context.pool, request.reference);
    if (known) return known;
  }
  const prelude = await sandboxPrelude(context, request.end_user_email);
  if ("answer" in prelude) return prelude.answer;
  const { refusal } = prelude;

  const answer = await inTransaction(context.pool, async (client) => {
    const outcome = await topUpInOneCall(client, { ...request, refusal });
    if (outcome.kind === "refused") return refused(outcome.reason);
    if (outcome.kind === "topup") {
      // The new bundle queues behind the running one; if the eSIM's bundles have all ended, it
      // starts now. The profile row is locked by the call, as lockProfileState would.
      const { iccid, installed_at, deleted_at } = outcome;
      await advance(client, { iccid, installed_at, deleted_at }, new Date());
    }
    return ok({ iccid: outcome.iccid, data_mb_total: outcome.data_mb_total });
  });
  if (answer.status === 200) context.signal(request.iccid);
  return answer;
}

async function recordedAnswer(
  db: Parameters<typeof selectTopupAnswer>[0],
  reference: string,
): Promise<SimulatorAnswer | null> {
  const recorded = await selectTopupAnswer(db, reference);
  if (recorded === null) return null;
  return "reason" in recorded
    ? refused(recorded.reason)
    : ok({ iccid: recorded.iccid, data_mb_total: recorded.data_mb_total });
}

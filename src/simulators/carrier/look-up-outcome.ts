// GET /outcomes/:reference: what the carrier did with one of our references, without doing
// anything. Provisioning again with the same reference would answer the same for a reference it
// knows, but would provision one it does not: an operator settling a stuck order needs to hear
// "never provisioned" without causing a provisioning.
import { ok, refused, type SimulatorAnswer } from "./answers.ts";
import { profileAnswer } from "./provision-profile.ts";
import { selectProfileByReference, selectRefusal, selectTopupByReference } from "./simulator.sql.ts";

type Queryable = Parameters<typeof selectProfileByReference>[0];

export async function lookUpOutcome(db: Queryable, reference: string): Promise<SimulatorAnswer> {
  const profile = await selectProfileByReference(db, reference);
  if (profile) return ok({ kind: "profile", ...profileAnswer(profile) });
  const topup = await selectTopupByReference(db, reference);
  if (topup) return ok({ kind: "topup", iccid: topup.iccid });
  const refusal = await selectRefusal(db, reference);
  if (refusal) return refused(refusal.reason);
  return { status: 404, body: { error: "not_found" } };
}

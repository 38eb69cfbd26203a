// Whether a partner's owner requires a second factor of the whole team (issue 31). Read at each
// sign-in of its people; set by an owner from the Team page, audited as team.two_factor_required.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { lockPartner, selectRequireTwoFactor, updateRequireTwoFactor } from "./partners.sql.ts";

export function requiresTwoFactor(db: Executor, partner_id: string): Promise<boolean> {
  return selectRequireTwoFactor(db, partner_id);
}

/** Sets the team's requirement and audits it; setting what is already set changes and logs nothing. */
export async function setRequiresTwoFactor(
  db: Kysely<Database>,
  partner_id: string,
  required: boolean,
  actor: Actor,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await lockPartner(tx, partner_id);
    if ((await selectRequireTwoFactor(tx, partner_id)) === required) return;
    await updateRequireTwoFactor(tx, partner_id, required);
    await recordAudit(tx, {
      actor,
      action: "team.two_factor_required",
      partner_id,
      target: { type: "partner", id: partner_id },
      details: { required },
    });
  });
}

// Whether a partner's owner requires a second factor of the whole team (issue 31). Read at each
// sign-in of its people; set by an owner from the Team page.
import type { Executor } from "../db/executor.ts";
import { selectRequireTwoFactor, updateRequireTwoFactor } from "./partners.sql.ts";

export function requiresTwoFactor(db: Executor, partner_id: string): Promise<boolean> {
  return selectRequireTwoFactor(db, partner_id);
}

export function setRequiresTwoFactor(db: Executor, partner_id: string, required: boolean): Promise<void> {
  return updateRequireTwoFactor(db, partner_id, required);
}

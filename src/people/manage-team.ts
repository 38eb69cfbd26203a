// A team's people changed by one of them (or the operator): a role changed, a person disabled or
// enabled (issue 31). Each change ends the person's sessions at once and is audited, in the
// transaction that makes it. A partner always keeps an active owner: a change that would take away
// its last one is refused (409 `last_owner`), checked with the partner's active owners locked, so
// two owners demoting each other at the same moment cannot both succeed.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { isRole, type Realm } from "./roles.ts";
import { endSessions } from "./sessions.ts";
import type { UserRow } from "./users.sql.ts";
import {
  lockActiveOperatorAdmins,
  lockActiveOwners,
  selectUser,
  updateUserRole,
  updateUserStatus,
} from "./users.sql.ts";

export type TeamChange = {
  realm: Realm;
  /** The team: the partner's id, or null for the operator's staff. */
  partner_id: string | null;
  user_id: string;
  actor: Actor;
  /** Whether the one changing may touch owners (team.owners); the operator's people always may. */
  may_change_owners: boolean;
};

type Tx = Kysely<Database>;

async function lockedMember(tx: Tx, change: TeamChange): Promise<UserRow> {
  const user = await selectUser(tx, change.user_id, true);
  if (!user || user.realm !== change.realm || user.partner_id !== change.partner_id)
    throw new ApiError("user_not_found", `No person ${change.user_id} in this team.`);
  return user;
}

/**
 * Refuses when `user` is the last active owner of their partner, or the operator's last active
 * admin (the owners, or admins, stay locked): nobody would be left to manage the team.
 */
async function keepAnOwner(tx: Tx, user: UserRow): Promise<void> {
  if (user.realm === "operator") {
    const admins = await lockActiveOperatorAdmins(tx);
    if (admins.includes(user.user_id) && admins.length <= 1)
      throw new ApiError(
        "last_owner",
        "This is the operator's only active admin: make someone else an admin first. The operator keeps at least one.",
      );
    return;
  }
  if (user.partner_id === null) return;
  // Locked before the person's row is read again: every change of owners takes them in one order.
  const owners = await lockActiveOwners(tx, user.partner_id);
  if (owners.includes(user.user_id) && owners.length <= 1)
    throw new ApiError(
      "last_owner",
      "This is the team's only active owner: make someone else an owner first. A partner keeps at least one active owner.",
    );
}

function refuseOwnerChange(change: TeamChange, touches_owner: boolean): void {
  if (touches_owner && !change.may_change_owners)
    throw new ApiError("forbidden", "Only an owner may make, change or disable an owner.");
}

export async function changeRole(
  db: Kysely<Database>,
  change: TeamChange & { role: string },
): Promise<UserRow> {
  if (!isRole(change.realm, change.role))
    throw new ApiError("invalid_request", `role: must be a ${change.realm} role.`);
  return db.transaction().execute(async (tx) => {
    if (change.partner_id !== null) await lockActiveOwners(tx, change.partner_id);
    else await lockActiveOperatorAdmins(tx);
    const user = await lockedMember(tx, change);
    if (user.role === change.role) return user;
    refuseOwnerChange(change, user.role === "owner" || change.role === "owner");
    if (user.role === "owner" || (user.realm === "operator" && user.role === "admin"))
      await keepAnOwner(tx, user);
    await updateUserRole(tx, user.user_id, change.role);
    await endSessions(tx, user.user_id);
    await recordAudit(tx, {
      actor: change.actor,
      action: "user.role_changed",
      partner_id: change.partner_id,
      target: { type: "user", id: user.user_id },
      details: { from: user.role, to: change.role },
    });
    return { ...user, role: change.role };
  });
}

export async function setUserStatus(
  db: Kysely<Database>,
  change: TeamChange & { status: "active" | "disabled" },
): Promise<UserRow> {
  return db.transaction().execute(async (tx) => {
    if (change.partner_id !== null) await lockActiveOwners(tx, change.partner_id);
    else await lockActiveOperatorAdmins(tx);
    const user = await lockedMember(tx, change);
    if (user.status === change.status) return user;
    if (user.status === "invited")
      throw new ApiError("invalid_request", "This person has not accepted the invitation yet.");
    refuseOwnerChange(change, user.role === "owner");
    if (change.status === "disabled") await keepAnOwner(tx, user);
    await updateUserStatus(tx, user.user_id, change.status);
    await endSessions(tx, user.user_id);
    await recordAudit(tx, {
      actor: change.actor,
      action: change.status === "disabled" ? "user.disabled" : "user.enabled",
      partner_id: change.partner_id,
      target: { type: "user", id: user.user_id },
      details: { role: user.role },
    });
    return { ...user, status: change.status };
  });
}

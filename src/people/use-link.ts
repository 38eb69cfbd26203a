// Using a one-time link (issue 31): accepting an invitation (a name and a password, the person
// becomes active) or resetting a password (every session of the person ends). The token's row is
// locked and marked used in the transaction that makes the change, so a link works once, even
// when two requests bring it at the same moment.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { partnerSuspended } from "../partners/list-partners.ts";
import { ApiError } from "../shared/errors.ts";
import { hasControlCharacters } from "./invite-user.ts";
import { isLinkToken, linkTokenHash } from "./one-time-links.ts";
import { hashPassword, passwordProblem } from "./passwords.ts";
import type { Realm } from "./roles.ts";
import { endSessions } from "./sessions.ts";
import {
  activateUser,
  lockUserToken,
  markUserTokenUsed,
  selectUser,
  setPasswordHash,
  type TokenKind,
  type UserRow,
  updateUserName,
} from "./users.sql.ts";

const MAX_NAME_LENGTH = 200;

/**
 * Why a link cannot be used (shown as is): null when it can. `partner_suspended`: an invitation to a
 * suspended partner's team (issue 32), refused while it is suspended and left unused, so it works
 * again on reactivation until it expires.
 */
export type LinkRefusal = "unknown" | "expired" | "used" | "partner_suspended";

/** A link's state without using it (the page that asks for the password). */
export async function linkState(
  db: Kysely<Database>,
  kind: TokenKind,
  realm: Realm,
  token: string,
): Promise<{ user: UserRow } | { refused: LinkRefusal }> {
  if (!isLinkToken(token)) return { refused: "unknown" };
  return db.transaction().execute(async (tx) => {
    const row = await lockUserToken(tx, linkTokenHash(token), kind);
    if (!row) return { refused: "unknown" as const };
    if (row.used) return { refused: "used" as const };
    if (row.expired) return { refused: "expired" as const };
    const user = await selectUser(tx, row.user_id);
    if (!user || user.realm !== realm) return { refused: "unknown" as const };
    if (kind === "invitation" ? user.status !== "invited" : user.status !== "active")
      return { refused: "used" as const };
    if (kind === "invitation" && (await joinsSuspendedTeam(tx, user)))
      return { refused: "partner_suspended" as const };
    return { user };
  });
}

export class LinkRefused extends Error {
  readonly refusal: LinkRefusal;
  constructor(refusal: LinkRefusal) {
    super(`link ${refusal}`);
    this.refusal = refusal;
  }
}

function checkedPassword(password: string, confirm: string, user: UserRow): void {
  if (password !== confirm)
    throw new ApiError("invalid_request", "The two passwords differ: type the same one twice.");
  const problem = passwordProblem(password, [user.email, user.name]);
  if (problem) throw new ApiError("invalid_request", problem);
}

async function useLink<T>(
  db: Kysely<Database>,
  kind: TokenKind,
  realm: Realm,
  token: string,
  work: (tx: Kysely<Database>, user: UserRow) => Promise<T>,
): Promise<T> {
  if (!isLinkToken(token)) throw new LinkRefused("unknown");
  const token_hash = linkTokenHash(token);
  return db.transaction().execute(async (tx) => {
    const row = await lockUserToken(tx, token_hash, kind);
    if (!row) throw new LinkRefused("unknown");
    if (row.used) throw new LinkRefused("used");
    if (row.expired) throw new LinkRefused("expired");
    const user = await selectUser(tx, row.user_id, true);
    if (!user || user.realm !== realm) throw new LinkRefused("unknown");
    if (kind === "invitation" ? user.status !== "invited" : user.status !== "active")
      throw new LinkRefused("used");
    const result = await work(tx, user);
    await markUserTokenUsed(tx, token_hash);
    return result;
  });
}

async function joinsSuspendedTeam(tx: Kysely<Database>, user: UserRow): Promise<boolean> {
  return user.partner_id !== null && (await partnerSuspended(tx, user.partner_id));
}

/** The invited person chooses a name and a password: active, audited; the caller starts the session. */
export async function acceptInvitation(
  db: Kysely<Database>,
  input: { realm: Realm; token: string; name: string; password: string; confirm: string; ip: string },
): Promise<UserRow> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || hasControlCharacters(name))
    throw new ApiError("invalid_request", `Give your name (1 to ${MAX_NAME_LENGTH} characters).`);
  return useLink(db, "invitation", input.realm, input.token, async (tx, user) => {
    // A suspended team takes no one new: a new person is new access (the rollback keeps the link).
    if (await joinsSuspendedTeam(tx, user)) throw new LinkRefused("partner_suspended");
    checkedPassword(input.password, input.confirm, { ...user, name });
    if (!(await activateUser(tx, user.user_id, await hashPassword(input.password))))
      throw new LinkRefused("used");
    await updateUserName(tx, user.user_id, name);
    await recordAudit(tx, {
      actor: { type: "user", id: user.user_id, email: user.email, ip: input.ip },
      action: "user.invitation_accepted",
      partner_id: user.partner_id,
      target: { type: "user", id: user.user_id },
      details: { role: user.role },
    });
    const active = await selectUser(tx, user.user_id);
    if (!active) throw new Error(`user ${user.user_id} vanished inside its own transaction`);
    return active;
  });
}

/** A new password by a reset link: every session of the person ends with it. */
export async function resetPassword(
  db: Kysely<Database>,
  input: { realm: Realm; token: string; password: string; confirm: string; ip: string },
): Promise<UserRow> {
  return useLink(db, "password_reset", input.realm, input.token, async (tx, user) => {
    checkedPassword(input.password, input.confirm, user);
    await setPasswordHash(tx, user.user_id, await hashPassword(input.password));
    await endSessions(tx, user.user_id);
    await recordAudit(tx, {
      actor: { type: "user", id: user.user_id, email: user.email, ip: input.ip },
      action: "user.password_changed",
      partner_id: user.partner_id,
      target: { type: "user", id: user.user_id },
      details: { by: "reset_link" },
    });
    return user;
  });
}

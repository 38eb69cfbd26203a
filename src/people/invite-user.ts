// Inviting a person (issue 31): from the operator API, the operator console, a partner's Team page
// or the CLI. The person is added `invited`, a one-time link (72 h) is stored as its hash, the
// invitation is audited, and the email goes out before the transaction commits: a relay that
// refuses it rolls the invitation back (invite again), so nobody is left invited with no link.
// Should the commit fail after the send, the mailed link finds no token and says so.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { findPartner } from "../partners/list-partners.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { NO_CONTROL_CHARACTERS } from "../shared/schemas.ts";
import { linkUrl, newLinkToken } from "./one-time-links.ts";
import { sendLinkEmail } from "./people-email.ts";
import { isRole, type Realm } from "./roles.ts";
import { deleteLapsedInvitee, insertUserToken } from "./users.sql.ts";
import { addUser, findUserByEmail, type UserRow } from "./users.ts";

export const INVITATION_VALID_MINUTES = 72 * 60;
export const MAX_EMAIL_LENGTH = 254;
/** One address, no spaces or angle brackets: enough to refuse typos; the mailbox proves the rest. */
const EMAIL = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+\.[^\s@<>(),;:"[\]\\]+$/;
/** Control characters (NUL among them, which PostgreSQL's text refuses) are never part of an address or a name. */
const WITHOUT_CONTROL_CHARACTERS = new RegExp(NO_CONTROL_CHARACTERS);
export function hasControlCharacters(text: string): boolean {
  return text.length > 0 && !WITHOUT_CONTROL_CHARACTERS.test(text);
}

export type Invitation = {
  realm: Realm;
  partner_id: string | null;
  email: string;
  role: string;
  actor: Actor;
  /** False for the CLI, which prints the link: the first operator needs no mail relay. */
  send_email?: boolean;
};

export function emailProblem(email: string): string | null {
  if (
    email.length === 0 ||
    email.length > MAX_EMAIL_LENGTH ||
    !EMAIL.test(email) ||
    hasControlCharacters(email)
  )
    return "email: must be an email address of at most 254 characters.";
  return null;
}

/**
 * 409 `user_exists` for an address of another partner's person: the operator's API says so; a
 * partner's console answers it as a sent invitation (so one partner learns nothing of another's).
 */
export class AddressOfAnotherTeam extends ApiError {
  constructor(email: string) {
    super("user_exists", `${email} already has an account with another team.`);
  }
}

/** The invited person and their link (the CLI prints it; everyone else gets it by email only). */
export async function inviteUser(
  db: Kysely<Database>,
  config: Pick<Config, "public_base_url" | "smtp_url" | "mail_from" | "data_dir">,
  input: Invitation,
): Promise<{ user: UserRow; link: string }> {
  const email = input.email.trim();
  const problem = emailProblem(email);
  if (problem)
    throw new ApiError("invalid_request", problem, {
      errors: [{ field: "email", code: "invalid_format", message: problem }],
    });
  if (!isRole(input.realm, input.role)) {
    const message = `role: must be a ${input.realm} role.`;
    throw new ApiError("invalid_request", message, {
      errors: [{ field: "role", code: "not_allowed", message }],
    });
  }
  let team: string | null = null;
  if (input.realm === "partner") {
    const partner = input.partner_id ? await findPartner(db, input.partner_id) : null;
    if (!partner) throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
    team = partner.name;
  }
  const { token, token_hash } = newLinkToken();
  const link = linkUrl(config.public_base_url, "invitation", input.realm, token);
  const user = await db.transaction().execute(async (tx) => {
    const add = () =>
      addUser(tx, { realm: input.realm, partner_id: input.partner_id, email, role: input.role });
    let added = await add();
    if (!added) {
      // The address is a person's already: of this team (409, the team may know its own people), or
      // of another. An invitation that lapsed unused gives the address up; a live person of
      // another team is refused with AddressOfAnotherTeam.
      const existing = await findUserByEmail(tx, input.realm, email);
      const same_team = existing !== null && existing.partner_id === input.partner_id;
      // A lapsed invitation (of this team too: inviting again is how a team resends one) is replaced.
      if (existing && (await deleteLapsedInvitee(tx, existing.user_id))) added = await add();
      if (!added) {
        if (same_team) throw new ApiError("user_exists", `${email} is already a person of this team.`);
        throw new AddressOfAnotherTeam(email);
      }
    }
    await insertUserToken(tx, {
      token_hash,
      user_id: added.user_id,
      kind: "invitation",
      valid_minutes: INVITATION_VALID_MINUTES,
    });
    await recordAudit(tx, {
      actor: input.actor,
      action: "user.invited",
      partner_id: input.partner_id,
      target: { type: "user", id: added.user_id },
      details: { email, role: input.role, realm: input.realm },
    });
    if (input.send_email !== false) {
      const message = {
        kind: "invitation" as const,
        realm: input.realm,
        to: email,
        link,
        team,
        role: input.role,
      };
      await sendLinkEmail(config, message).catch((error: unknown) => {
        // Thrown inside the transaction: the invitation rolls back, nobody is left invited without a link.
        throw Object.assign(
          new ApiError(
            "service_unavailable",
            "The invitation email could not be sent, so nobody was invited; try again in a moment.",
          ),
          { cause: error },
        );
      });
    }
    return added;
  });
  return { user, link };
}

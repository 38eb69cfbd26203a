// Asking for a password reset (issue 31). The answer is the same whatever the email (no account,
// an invited or disabled one, a throttled one): the caller shows "if an account exists, we sent a
// link" and does not wait for the mail, so neither the words nor the time tell whether the email
// has an account. Budgets keep the form from flooding an inbox: 3 links per account per hour, and
// 10 requests per address per 15 minutes (counted with the sign-in failures' table and window).
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { addressKey } from "../shared/address-key.ts";
import { hasControlCharacters, MAX_EMAIL_LENGTH } from "./invite-user.ts";
import { linkUrl, newLinkToken } from "./one-time-links.ts";
import type { LinkEmail } from "./people-email.ts";
import type { Realm } from "./roles.ts";
import { FAILURE_WINDOW_MINUTES } from "./sign-in.ts";
import {
  countFailures,
  countRecentTokens,
  insertFailures,
  insertUserToken,
  retireUserTokens,
  selectUser,
  selectUserByEmail,
} from "./users.sql.ts";

export const RESET_VALID_MINUTES = 60;
export const RESETS_PER_ACCOUNT_PER_HOUR = 3;
export const RESETS_PER_ADDRESS = 10;

/**
 * Records the request and, when the email is an active person's within budget, a new link (older
 * unused ones stop working). Returns the email to send, or null: the caller sends it without
 * making the answer wait.
 */
export async function requestPasswordReset(
  db: Kysely<Database>,
  config: Pick<Config, "public_base_url">,
  input: { realm: Realm; email: string; ip: string },
): Promise<LinkEmail | null> {
  const email = input.email.trim().slice(0, MAX_EMAIL_LENGTH);
  const address = `reset-address:${input.realm}:${addressKey(input.ip)}`;
  return db.transaction().execute(async (tx) => {
    const [counted] = await countFailures(
      tx,
      [{ subject: address, limit: RESETS_PER_ADDRESS }],
      FAILURE_WINDOW_MINUTES,
    );
    // Past the address's budget nothing is written either: a flood adds no rows.
    if ((counted?.failures ?? 0) >= RESETS_PER_ADDRESS) return null;
    await insertFailures(tx, [address]);
    const user =
      email.length > 0 && !hasControlCharacters(email)
        ? await selectUserByEmail(tx, input.realm, email)
        : null;
    if (user?.status !== "active") return null;
    // One request of a person at a time (they run after their answers, so they may overlap): the
    // count of recent links below is then exact.
    await selectUser(tx, user.user_id, true);
    if ((await countRecentTokens(tx, user.user_id, "password_reset", 60)) >= RESETS_PER_ACCOUNT_PER_HOUR)
      return null;
    await retireUserTokens(tx, user.user_id, "password_reset");
    const { token, token_hash } = newLinkToken();
    await insertUserToken(tx, {
      token_hash,
      user_id: user.user_id,
      kind: "password_reset",
      valid_minutes: RESET_VALID_MINUTES,
    });
    await recordAudit(tx, {
      actor: { type: "user", id: user.user_id, email: user.email, ip: input.ip },
      action: "user.password_reset_requested",
      partner_id: user.partner_id,
      target: { type: "user", id: user.user_id },
    });
    return {
      kind: "password_reset" as const,
      realm: input.realm,
      to: user.email,
      link: linkUrl(config.public_base_url, "password_reset", input.realm, token),
      team: null,
      role: user.role,
    };
  });
}

// Signing in with single sign-on (issue 31): OpenID Connect's authorization code flow with PKCE
// (S256), state and nonce, through openid-client. The start keeps the verifier, state and nonce
// server-side (sso_attempts, keyed by the SHA-256 of a random attempt id the browser holds in a
// short-lived cookie); the callback takes that row once, has openid-client check the answer
// (state, the code exchanged with the verifier, the ID token's signature, issuer, audience and
// nonce), then trusts the email only when the provider says it is verified and the partner vouches
// for its domain. The person is the partner's one with that email: an invited one becomes active, a
// disabled one is refused, someone of another partner is refused, and nobody yet joins as `viewer`.
import { createHash, randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import { recordAudit } from "../audit/record-audit.ts";
import type { Executor } from "../db/executor.ts";
import type { AppContext } from "../shared/context.ts";
import { ssoSecrets } from "./configure-sso.ts";
import {
  countLiveAttempts,
  deleteExpiredAttempts,
  insertAttempt,
  selectConnection,
  selectDomainPartner,
  takeAttempt,
} from "./sso.sql.ts";
import { discoverProvider } from "./sso-provider.ts";
import { activateWithoutPassword, addUser, findUser, findUserByEmail, type UserRow } from "./users.ts";

/** How long the provider may keep the person (signing in, consenting) before the attempt is void. */
export const ATTEMPT_MINUTES = 10;
/** The role of a person SSO brings in whom no owner invited. */
export const SSO_JOIN_ROLE = "viewer";
const PURGE_PER_START = 100;
/**
 * Sign-ins an address may have under way at once: each start reads the provider and keeps a row,
 * so without a bound anyone could fill the table and have us call a partner's provider at will.
 */
export const MAX_ATTEMPTS_PER_ADDRESS = 20;
const MAX_EMAIL_LENGTH = 254;
const MAX_NAME_LENGTH = 200;
const ATTEMPT_ID = /^[A-Za-z0-9_-]{43}$/;

/** A sign-in that cannot go on: a title and a sentence for the person, never a secret. */
export type SsoRefusal = {
  kind: "refused";
  /** 400 the input, 403 a refusal, 429 too many starts, 502 the provider could not be read. */
  status: 400 | 403 | 429 | 502;
  title: string;
  detail: string;
  /** For the log only, never shown: what the provider or openid-client said. */
  cause?: string;
};

function refused(
  title: string,
  detail: string,
  status: SsoRefusal["status"] = 403,
  cause?: unknown,
): SsoRefusal {
  return {
    kind: "refused",
    status,
    title,
    detail,
    ...(cause === undefined ? {} : { cause: causeOf(cause) }),
  };
}

/** An error and its causes, one line (openid-client wraps the cause in "something went wrong"). */
function causeOf(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    parts.push(`${e.name}: ${e.message}`);
  return parts.join(" <- ").slice(0, 1000) || String(error).slice(0, 1000);
}

function unreachable(cause: unknown): SsoRefusal {
  return refused(
    "Your identity provider did not answer",
    "Try again in a moment, or sign in with your password.",
    502,
    cause,
  );
}

export function attemptHash(attempt_id: string): Buffer {
  return createHash("sha256").update(`sso-attempt\0${attempt_id}`, "utf8").digest();
}

/** The lower-case domain of an email address, or null when it is not one. */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf("@");
  if (at < 1 || at === email.length - 1 || email.length > MAX_EMAIL_LENGTH) return null;
  return email.slice(at + 1).toLowerCase();
}

async function providerOf(ctx: Pick<AppContext, "db" | "config">, partner_id: string) {
  const connection = await selectConnection(ctx.db, partner_id);
  if (connection === null) return null;
  const client_secret = ssoSecrets(ctx.config).open(partner_id, connection.client_secret_sealed);
  const provider = await discoverProvider(
    { issuer: connection.issuer, client_id: connection.client_id, client_secret },
    ctx.config.sso_allow_private_networks,
  );
  return { connection, provider };
}

/**
 * The provider's authorization URL for a person of `email`'s domain, and the attempt id to keep in
 * the browser's cookie; or why not (no partner vouches for the domain, the provider cannot be read).
 */
export async function startSsoSignIn(
  ctx: Pick<AppContext, "db" | "config">,
  input: { email: string; redirect_uri: string; ip: string },
): Promise<{ kind: "redirect"; authorization_url: string; attempt_id: string } | SsoRefusal> {
  const email = input.email.trim();
  const domain = emailDomain(email);
  if (domain === null) return refused("Sign in with SSO", "Enter your work email address.", 400);
  const partner_id = await selectDomainPartner(ctx.db, domain);
  if (partner_id === null)
    return refused(
      "Sign in with SSO",
      `Single sign-on is not set up for ${domain}. Sign in with your password.`,
      400,
    );
  if ((await countLiveAttempts(ctx.db, input.ip)) >= MAX_ATTEMPTS_PER_ADDRESS)
    return refused(
      "Too many sign-ins started",
      `Too many sign-ins with SSO were started from your address; try again in ${ATTEMPT_MINUTES} minutes.`,
      429,
    );
  let found: Awaited<ReturnType<typeof providerOf>>;
  try {
    found = await providerOf(ctx, partner_id);
  } catch (error) {
    return unreachable(error);
  }
  if (found === null)
    return refused(
      "Sign in with SSO",
      `Single sign-on is not set up for ${domain}. Sign in with your password.`,
      400,
    );
  const code_verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const wrongly_set_up = (cause: unknown) =>
    refused(
      "Your identity provider is set up wrongly",
      "Its authorization endpoint is not an https address. Ask your team's owner.",
      502,
      cause,
    );
  let authorization_url: URL;
  try {
    authorization_url = oidc.buildAuthorizationUrl(found.provider, {
      redirect_uri: input.redirect_uri,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(code_verifier),
      code_challenge_method: "S256",
      state,
      nonce,
      login_hint: email,
    });
  } catch (error) {
    return wrongly_set_up(error);
  }
  // The provider's own metadata names this endpoint: the browser goes there, so it must be a web
  // address (never `javascript:` or `data:`) under the same scheme rule as the issuer.
  const scheme_allowed = ["https:", ...(ctx.config.sso_allow_private_networks ? ["http:"] : [])];
  if (!scheme_allowed.includes(authorization_url.protocol))
    return wrongly_set_up(`authorization_endpoint scheme ${authorization_url.protocol}`);
  const attempt_id = randomBytes(32).toString("base64url");
  await deleteExpiredAttempts(ctx.db, PURGE_PER_START);
  await insertAttempt(ctx.db, {
    attempt_hash: attemptHash(attempt_id),
    partner_id,
    code_verifier,
    state,
    nonce,
    redirect_uri: input.redirect_uri,
    ip: input.ip,
    lifetime_minutes: ATTEMPT_MINUTES,
  });
  return { kind: "redirect", authorization_url: authorization_url.href, attempt_id };
}

type Identity = { email: string; name: string };

/** The provider's answer checked and the code exchanged: the verified email, or why not. */
async function identityFrom(
  provider: oidc.Configuration,
  callback_url: URL,
  checks: { code_verifier: string; state: string; nonce: string },
): Promise<Identity | SsoRefusal> {
  let claims: Record<string, unknown>;
  try {
    const tokens = await oidc.authorizationCodeGrant(provider, callback_url, {
      pkceCodeVerifier: checks.code_verifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    claims = { ...tokens.claims() };
    // An ID token without the email or its verification: both from userinfo (whose subject
    // openid-client checks against the ID token's), never one from each.
    if (typeof claims.email !== "string" || claims.email_verified === undefined) {
      const info = await oidc.fetchUserInfo(provider, tokens.access_token, String(claims.sub));
      claims = {
        ...claims,
        email: info.email,
        email_verified: info.email_verified,
        name: claims.name ?? info.name,
      };
    }
  } catch (error) {
    if (error instanceof oidc.AuthorizationResponseError)
      return refused(
        "Your identity provider did not sign you in",
        `It answered: ${error.error.slice(0, 100)}.`,
        403,
        error,
      );
    return refused(
      "Your identity provider's answer was refused",
      "It could not be checked (an expired or altered sign-in, or a provider set up wrongly). Start again.",
      403,
      error,
    );
  }
  if (typeof claims.email !== "string" || claims.email.length > MAX_EMAIL_LENGTH)
    return refused(
      "No email from your identity provider",
      "It did not say your email address, so you cannot be signed in.",
    );
  if (claims.email_verified !== true)
    return refused(
      "Email not verified",
      "Your identity provider does not say your email address is verified.",
    );
  const name = typeof claims.name === "string" ? claims.name.trim().slice(0, MAX_NAME_LENGTH) : "";
  return { email: claims.email.trim(), name };
}

/**
 * Completes a sign-in with SSO from the provider's redirect back (`callback_url`, the query
 * included): the person to start a session for, active; or why not. The attempt is spent either way.
 */
export async function finishSsoSignIn(
  ctx: Pick<AppContext, "db" | "config">,
  input: { attempt_id: string | undefined; query: string; ip: string },
): Promise<{ kind: "signed_in"; user: UserRow } | SsoRefusal> {
  const expired = refused("This sign-in has expired", "Start again with Sign in with SSO.");
  if (input.attempt_id === undefined || !ATTEMPT_ID.test(input.attempt_id)) return expired;
  const attempt = await takeAttempt(ctx.db, attemptHash(input.attempt_id));
  if (attempt === null) return expired;
  let found: Awaited<ReturnType<typeof providerOf>>;
  try {
    found = await providerOf(ctx, attempt.partner_id);
  } catch (error) {
    return unreachable(error);
  }
  if (found === null)
    return refused(
      "Single sign-on is off",
      "Your team no longer signs in with SSO. Sign in with your password.",
    );
  const callback_url = new URL(attempt.redirect_uri);
  callback_url.search = input.query;
  const identity = await identityFrom(found.provider, callback_url, attempt);
  if ("kind" in identity) return identity;
  const domain = emailDomain(identity.email);
  if (domain === null || !found.connection.domains.includes(domain)) {
    await auditRefusal(ctx.db, attempt.partner_id, identity.email, null, input.ip, "domain_not_vouched_for");
    return refused(
      "This email's domain is not vouched for",
      `Your team's single sign-on does not vouch for ${domain ?? "this address"}.`,
    );
  }
  return personFor(ctx, attempt.partner_id, identity, input.ip);
}

/**
 * A refused sign-in of someone the provider did sign in, in the team's audit log as a failed
 * sign-in: the person's id when they are of this team (another team's is not named here).
 */
async function auditRefusal(
  db: Executor,
  partner_id: string,
  email: string,
  user_id: string | null,
  ip: string,
  reason: "domain_not_vouched_for" | "user_disabled" | "user_of_another_team",
): Promise<void> {
  await recordAudit(db, {
    actor: { type: "user", id: user_id, email: email.slice(0, MAX_EMAIL_LENGTH), ip },
    action: "user.sign_in_failed",
    partner_id,
    target: { type: "user", id: user_id },
    details: { realm: "partner", method: "sso", reason },
  });
}

/** The partner's person with this email, made active or brought in as a viewer; audited. */
async function personFor(
  ctx: Pick<AppContext, "db">,
  partner_id: string,
  identity: Identity,
  ip: string,
): Promise<{ kind: "signed_in"; user: UserRow } | SsoRefusal> {
  const elsewhere = refused(
    "This email belongs to another team",
    "A person of another team here has this email address; ask your owner to invite you with another.",
  );
  return ctx.db.transaction().execute(async (tx) => {
    let user = await findUserByEmail(tx, "partner", identity.email);
    if (user !== null && user.partner_id !== partner_id) {
      await auditRefusal(tx, partner_id, identity.email, null, ip, "user_of_another_team");
      return elsewhere;
    }
    if (user?.status === "disabled") {
      await auditRefusal(tx, partner_id, identity.email, user.user_id, ip, "user_disabled");
      return refused("Your access is disabled", "An owner or admin of your team disabled your account.");
    }
    const actor = { type: "user" as const, id: user?.user_id ?? null, email: identity.email, ip };
    if (user === null) {
      user = await addUser(tx, {
        realm: "partner",
        partner_id,
        email: identity.email,
        name: identity.name,
        role: SSO_JOIN_ROLE,
      });
      // Someone of another team took the email between the read and the insert.
      if (user === null) return elsewhere;
      await activateWithoutPassword(tx, user.user_id);
      await recordAudit(tx, {
        actor: { ...actor, id: user.user_id },
        action: "user.joined_via_sso",
        partner_id,
        target: { type: "user", id: user.user_id },
        details: { email: user.email, role: SSO_JOIN_ROLE, via: "sso" },
      });
    } else if (user.status === "invited" && (await activateWithoutPassword(tx, user.user_id))) {
      await recordAudit(tx, {
        actor,
        action: "user.invitation_accepted",
        partner_id,
        target: { type: "user", id: user.user_id },
        details: { role: user.role, via: "sso" },
      });
    }
    const active = await findUser(tx, user.user_id);
    if (active === null || active.status !== "active")
      return refused("Your access is disabled", "An owner or admin of your team disabled your account.");
    return { kind: "signed_in" as const, user: active };
  });
}

// Signing in and out (issue 31): people sign in with their email and password, then a second factor
// when they have one (or must enrol one, when their team requires it). Each refused password spends
// the address's sign-in failure budget (in memory, per process) and is counted per account and per
// address in the database (people/sign-in.ts), and no answer tells whether an email has an account.
// A session id is always new at sign-in (never one from before it): no session fixation.
import type { FastifyReply, FastifyRequest } from "fastify";
import { requiresTwoFactor } from "../partners/two-factor-policy.ts";
import { MAX_PASSWORD_LENGTH } from "../people/passwords.ts";
import {
  type ConsoleSession,
  finishSignIn,
  type SessionStage,
  signOut,
  startSession,
} from "../people/sessions.ts";
import { checkPassword, recordSignIn } from "../people/sign-in.ts";
import type { UserRow } from "../people/users.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { readsQuery } from "../shared/query-names.ts";
import { html } from "./html.ts";
import { type Area, notice, page } from "./layout.ts";
import type { ConsolePages, SignInFailures } from "./pages.ts";
import {
  clearSessionCookie,
  cookie,
  formOf,
  queryValue,
  rememberSession,
  sameOrigin,
  seeOther,
  sessionCookieName,
  sessionOf,
  setSessionCookie,
} from "./request.ts";

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export const AREA_HOME = { partner: "/console", operator: "/console/admin" } as const;

const SIGN_IN = {
  partner: { path: "/console/sign-in", title: "Sign in" },
  operator: { path: "/console/admin/sign-in", title: "Operator sign-in" },
} as const;

/** Where a session that still owes a second factor goes: to give it, or to enrol one. */
export function secondFactorPath(area: Area, stage: SessionStage): string {
  const home = AREA_HOME[area];
  return stage === "second_factor" ? `${home}/sign-in/second-factor` : `${home}/account/two-factor`;
}

const MESSAGES: Record<string, [string, "ok" | "error"]> = {
  ended: ["Your session has ended. Sign in again.", "error"],
  signed_out: ["You are signed out.", "ok"],
  password_set: ["Your password is set. Sign in with it.", "ok"],
};

function signInForm(area: Area, message: string | null, status: "ok" | "error", email = ""): string {
  const s = SIGN_IN[area];
  const reset = area === "partner" ? "/console/password-reset" : "/console/admin/password-reset";
  return page(
    s.title,
    { area },
    html`<div class="panel">
      ${message === null ? "" : notice(status, message)}
      <form method="post" action="${s.path}">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${email}">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${MAX_PASSWORD_LENGTH}">
        <div class="actions"><button type="submit">Sign in</button></div>
      </form>
      <p><a href="${reset}">Forgot your password?</a></p>
      ${area === "partner" ? html`<p><a href="/console/sso">Sign in with SSO</a></p>` : ""}
    </div>`,
  );
}

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

/** The stage a person's new session starts at: a second factor owed, one to enrol, or none. */
async function firstStage(ctx: AppContext, user: UserRow): Promise<SessionStage> {
  if (user.totp_secret_sealed !== null || user.has_passkey) return "second_factor";
  if (user.partner_id !== null && (await requiresTwoFactor(ctx.db, user.partner_id)))
    return "enrol_second_factor";
  return "signed_in";
}

/**
 * Starts a person's session and sets its cookie; where to go next: home, or the second factor.
 * Shared by the password sign-in, single sign-on and an accepted invitation.
 */
export async function beginSession(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: AppContext,
  user: UserRow,
  method: "password" | "sso",
): Promise<string> {
  const area: Area = user.realm;
  // A session the browser already holds ends here: one person, one browser, one live session.
  const held = cookie(request, sessionCookieName(request, ctx.config.app_env, area));
  if (held !== undefined && SESSION_ID.test(held)) await signOut(ctx.db, held);
  const stage = await firstStage(ctx, user);
  const session_id = await startSession(ctx.db, ctx.config, user, stage);
  if (stage === "signed_in") await recordSignIn(ctx.db, user, { ip: request.ip, method });
  setSessionCookie(request, reply, ctx.config.app_env, {
    kind: area,
    value: session_id,
    max_age_s: ctx.config.console_session_hours * 3600,
  });
  return stage === "signed_in" ? AREA_HOME[area] : secondFactorPath(area, stage);
}

/**
 * The second factor is given or enrolled: the session is replaced by a signed-in one under a new id
 * (its cookie set here, and this request's session updated, so a page drawn now carries its CSRF
 * token), and the sign-in recorded. Answers the new session.
 */
export async function completeSignIn(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: AppContext,
  method: "totp" | "recovery_code" | "passkey",
): Promise<ConsoleSession> {
  const session = sessionOf(request);
  const session_id = await finishSignIn(ctx.db, ctx.config, session);
  await recordSignIn(
    ctx.db,
    { user_id: session.user_id, email: session.email, partner_id: session.partner_id, realm: session.kind },
    { ip: request.ip, method },
  );
  setSessionCookie(request, reply, ctx.config.app_env, {
    kind: session.kind,
    value: session_id,
    max_age_s: ctx.config.console_session_hours * 3600,
  });
  const signed_in: ConsoleSession = { ...session, session_id, stage: "signed_in", signed_in_at: new Date() };
  rememberSession(request, signed_in);
  return signed_in;
}

function postSignIn(ctx: AppContext, area: Area, failures: SignInFailures) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!sameOrigin(request))
      return sendHtml(reply, 403, signInForm(area, "Sign in from this console's own page.", "error"));
    const form = formOf(request);
    const email = (form.email ?? "").slice(0, 254);
    try {
      const user = await failures.attempt(request.ip, area, () =>
        checkPassword(ctx.db, { realm: area, email, password: form.password ?? "", ip: request.ip }),
      );
      return seeOther(reply, await beginSession(request, reply, ctx, user, "password"));
    } catch (error) {
      if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 429)) throw error;
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return sendHtml(reply, error.status, signInForm(area, error.message, "error", email));
    }
  };
}

/** The two sign-in pages: outside the areas' session check. */
export function signInPages(scope: App, ctx: AppContext, failures: SignInFailures): void {
  for (const area of ["partner", "operator"] as const) {
    const path = SIGN_IN[area].path.slice("/console".length);
    scope.get(path, readsQuery(...Object.keys(MESSAGES)), async (request, reply) => {
      const shown = Object.keys(MESSAGES).find((name) => queryValue(request, name) !== null);
      const [message, status] = shown ? MESSAGES[shown]! : [null, "error" as const];
      return sendHtml(reply, 200, signInForm(area, message, status));
    });
    scope.post(path, postSignIn(ctx, area, failures));
  }
}

function signOutPage(area: Area): ConsolePages {
  return (scope, ctx) => {
    scope.post("/sign-out", async (request, reply) => {
      const session: ConsoleSession = sessionOf(request);
      await signOut(ctx.db, session.session_id);
      clearSessionCookie(request, reply, ctx.config.app_env, area);
      return seeOther(reply, `${SIGN_IN[area].path}?signed_out=1`);
    });
  };
}

export const partnerSignOut = signOutPage("partner");
export const operatorSignOut = signOutPage("operator");

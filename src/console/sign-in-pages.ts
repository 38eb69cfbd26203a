// Signing in and out. A partner trades one of its API keys for a session; the operator its
// ADMIN_TOKEN. The secret is checked like the API checks it, each refusal spends the address's
// sign-in failure budget (a budget of its own, apart from the API's), and the secret itself is never
// stored or shown.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { readsQuery } from "../shared/query-names.ts";
import { html } from "./html.ts";
import { type Area, notice, page } from "./layout.ts";
import type { ConsolePages, SignInFailures } from "./pages.ts";
import {
  clearSessionCookie,
  formOf,
  queryValue,
  sameOrigin,
  seeOther,
  sessionOf,
  setSessionCookie,
} from "./request.ts";
import { type ConsoleSession, signInOperator, signInPartner, signOut } from "./sessions.ts";

const SIGN_IN = {
  partner: {
    path: "/console/sign-in",
    home: "/console",
    title: "Sign in",
    label: "API key",
    hint: "A sandbox key starts with sand_, a production key with prod_. It is exchanged for a session and not kept in the browser.",
  },
  operator: {
    path: "/console/admin/sign-in",
    home: "/console/admin",
    title: "Operator sign-in",
    label: "Operator token (ADMIN_TOKEN)",
    hint: "The token the service was started with.",
  },
} as const;

function signInForm(area: Area, message: string | null, status: "ok" | "error" = "error"): string {
  const s = SIGN_IN[area];
  return page(
    s.title,
    { area },
    html`<div class="panel">
      ${message === null ? "" : notice(status, message)}
      <form method="post" action="${s.path}">
        <label for="secret">${s.label}</label>
        <input id="secret" name="secret" type="password" autocomplete="off" required maxlength="200" aria-describedby="secret-hint">
        <p class="hint" id="secret-hint">${s.hint}</p>
        <div class="actions"><button type="submit">Sign in</button></div>
      </form>
    </div>`,
  );
}

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

async function signIn(ctx: AppContext, area: Area, secret: string, ip: string): Promise<ConsoleSession> {
  return area === "operator"
    ? signInOperator(ctx.db, ctx.config, secret)
    : signInPartner(ctx.db, ctx.config, secret, ip);
}

function postSignIn(ctx: AppContext, area: Area, failures: SignInFailures) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!sameOrigin(request))
      return sendHtml(reply, 403, signInForm(area, "Sign in from this console's own page."));
    const secret = formOf(request).secret ?? "";
    try {
      const session = await failures.attempt(request.ip, area, () => signIn(ctx, area, secret, request.ip));
      const max_age_s = ctx.config.console_session_hours * 3600;
      setSessionCookie(request, reply, ctx.config.app_env, {
        kind: area,
        value: session.session_id,
        max_age_s,
      });
      return seeOther(reply, SIGN_IN[area].home);
    } catch (error) {
      // 401: not a key (or token); 403: a key that may not sign in (read-only, or from elsewhere).
      if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403)) throw error;
      return sendHtml(reply, error.status, signInForm(area, error.message));
    }
  };
}

/** The two sign-in pages: outside the areas' session check. */
export function signInPages(scope: App, ctx: AppContext, failures: SignInFailures): void {
  for (const area of ["partner", "operator"] as const) {
    const path = SIGN_IN[area].path.slice("/console".length);
    scope.get(path, readsQuery("ended", "signed_out"), async (request, reply) => {
      const message =
        queryValue(request, "ended") !== null
          ? "Your session has ended. Sign in again."
          : queryValue(request, "signed_out") !== null
            ? "You are signed out."
            : null;
      return sendHtml(
        reply,
        200,
        signInForm(area, message, queryValue(request, "signed_out") ? "ok" : "error"),
      );
    });
    scope.post(path, postSignIn(ctx, area, failures));
  }
}

function signOutPage(area: Area): ConsolePages {
  return (scope, ctx) => {
    scope.post("/sign-out", async (request, reply) => {
      await signOut(ctx.db, sessionOf(request).session_id);
      clearSessionCookie(request, reply, ctx.config.app_env, area);
      return seeOther(reply, `${SIGN_IN[area].path}?signed_out=1`);
    });
  };
}

export const partnerSignOut = signOutPage("partner");
export const operatorSignOut = signOutPage("operator");

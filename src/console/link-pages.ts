// The pages of people's one-time links (issue 31), outside the areas' session check: accepting an
// invitation (a name and a password, then signed in) and resetting a forgotten password (asking for
// a link, then choosing a new password). A link works once: a used, expired or unknown one gets a
// 410 page that says which; an invitation to a suspended partner's team, a 403 page (issue 32).
// Asking for a reset answers the same whatever the email.
import type { FastifyReply, FastifyRequest } from "fastify";
import { MAX_PASSWORD_LENGTH } from "../people/passwords.ts";
import { sendLinkEmail } from "../people/people-email.ts";
import { requestPasswordReset } from "../people/request-password-reset.ts";
import type { Realm } from "../people/roles.ts";
import {
  acceptInvitation,
  type LinkRefusal,
  LinkRefused,
  linkState,
  resetPassword,
} from "../people/use-link.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { type Html, html } from "./html.ts";
import { notice, page } from "./layout.ts";
import { formOf, sameOrigin, seeOther } from "./request.ts";
import { AREA_HOME, beginSession } from "./sign-in-pages.ts";

const REFUSALS: Record<LinkRefusal, string> = {
  unknown: "This link is not valid. Check that it was copied whole, or ask for a new one.",
  expired: "This link has expired. Ask for a new one.",
  used: "This link was already used: a link works once. Sign in, or ask for a new one.",
  partner_suspended:
    "The operator suspended this team's account: no one can join it until it is reactivated. The invitation " +
    "still works after that, until it expires. Nothing was changed.",
};

/** 410 Gone for a link that will never work; 403 for one refused only while the partner is suspended. */
function refusalStatus(refusal: LinkRefusal): number {
  return refusal === "partner_suspended" ? 403 : 410;
}

function send(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

function refusedPage(area: Realm, title: string, refusal: LinkRefusal): string {
  const home = AREA_HOME[area];
  return page(
    title,
    { area },
    html`<div class="panel">${notice("error", REFUSALS[refusal])}
      <p><a href="${home}/sign-in">Sign in</a> · <a href="${home}/password-reset">Forgot your password?</a></p></div>`,
  );
}

function passwordFields(): Html {
  return html`<label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="12" maxlength="${MAX_PASSWORD_LENGTH}" aria-describedby="password-hint">
    <p class="hint" id="password-hint">At least 12 characters, not a commonly used one: a few unrelated words work well.</p>
    <label for="confirm">The same password again</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength="${MAX_PASSWORD_LENGTH}">`;
}

function invitationForm(
  area: Realm,
  token: string,
  email: string,
  problem: string | null,
  name = "",
): string {
  const action = `${AREA_HOME[area]}/invitations/${token}`;
  return page(
    "Join the team",
    { area },
    html`<div class="panel">${problem ? notice("error", problem) : ""}
      <p>You are joining as <strong>${email}</strong>. Choose your name and a password.</p>
      <form method="post" action="${action}">
        <input type="hidden" name="email" value="${email}" autocomplete="username">
        <label for="name">Your name</label>
        <input id="name" name="name" required maxlength="200" autocomplete="name" value="${name}">
        ${passwordFields()}
        <div class="actions"><button type="submit">Join</button></div>
      </form></div>`,
  );
}

function resetForm(area: Realm, token: string, problem: string | null): string {
  return page(
    "Choose a new password",
    { area },
    html`<div class="panel">${problem ? notice("error", problem) : ""}
      <p>Choosing a new password signs you out everywhere.</p>
      <form method="post" action="${AREA_HOME[area]}/password-reset/${token}">
        ${passwordFields()}
        <div class="actions"><button type="submit">Save the new password</button></div>
      </form></div>`,
  );
}

function requestForm(area: Realm, sent: boolean): string {
  return page(
    "Reset your password",
    { area },
    html`<div class="panel">${
      sent
        ? notice(
            "ok",
            "If an account exists for that email, we sent a link to it. The link works once, for 1 hour.",
          )
        : ""
    }
      <form method="post" action="${AREA_HOME[area]}/password-reset">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254">
        <div class="actions"><button type="submit">Send a reset link</button></div>
      </form>
      <p><a href="${AREA_HOME[area]}/sign-in">Back to sign-in</a></p></div>`,
  );
}

function tokenOf(request: FastifyRequest): string {
  return (request.params as { token: string }).token;
}

const FOREIGN_FORM = "Use this console's own page. Nothing was changed.";

function invitationPages(scope: App, ctx: AppContext, area: Realm, path: string): void {
  scope.get(`${path}/:token`, async (request, reply) => {
    const state = await linkState(ctx.db, "invitation", area, tokenOf(request));
    if ("refused" in state)
      return send(reply, refusalStatus(state.refused), refusedPage(area, "Invitation", state.refused));
    return send(reply, 200, invitationForm(area, tokenOf(request), state.user.email, null));
  });
  scope.post(`${path}/:token`, async (request, reply) => {
    const token = tokenOf(request);
    const form = formOf(request);
    if (!sameOrigin(request))
      return send(reply, 403, invitationForm(area, token, form.email ?? "", FOREIGN_FORM));
    try {
      const user = await acceptInvitation(ctx.db, {
        realm: area,
        token,
        name: form.name ?? "",
        password: form.password ?? "",
        confirm: form.confirm ?? "",
        ip: request.ip,
      });
      return seeOther(reply, await beginSession(request, reply, ctx, user, "password"));
    } catch (error) {
      if (error instanceof LinkRefused)
        return send(reply, refusalStatus(error.refusal), refusedPage(area, "Invitation", error.refusal));
      if (error instanceof ApiError && error.code === "invalid_request")
        return send(
          reply,
          400,
          invitationForm(area, token, form.email ?? "", error.message, form.name ?? ""),
        );
      throw error;
    }
  });
}

/** Password reset requests being worked on after their answers, per process. */
const RESETS_IN_FLIGHT = 16;
let resetsInFlight = 0;

function resetPages(scope: App, ctx: AppContext, area: Realm, path: string): void {
  scope.get(path, async (_request, reply) => send(reply, 200, requestForm(area, false)));
  scope.post(path, async (request, reply) => {
    if (!sameOrigin(request)) return send(reply, 403, requestForm(area, false));
    const input = { realm: area, email: formOf(request).email ?? "", ip: request.ip };
    // Nothing of it is awaited: the lookup, the link and the email run after the answer is sent, so
    // the answer takes the same time whether or not the email has an account (a lookup, a token and
    // an audit entry took 2.4 ms more for one that had).
    // At most RESETS_IN_FLIGHT of them at once per process: past that a request is dropped (the
    // answer is the same), so a flood cannot queue work on the database pool.
    if (resetsInFlight < RESETS_IN_FLIGHT) {
      resetsInFlight++;
      setImmediate(() => {
        requestPasswordReset(ctx.db, ctx.config, input)
          .then((email) => (email ? sendLinkEmail(ctx.config, email) : undefined))
          .catch((error: unknown) => request.log.error({ err: error }, "password reset request failed"))
          .finally(() => resetsInFlight--);
      });
    } else request.log.warn("password reset request dropped: too many in flight");
    return send(reply, 200, requestForm(area, true));
  });
  scope.get(`${path}/:token`, async (request, reply) => {
    const state = await linkState(ctx.db, "password_reset", area, tokenOf(request));
    if ("refused" in state) return send(reply, 410, refusedPage(area, "Password reset", state.refused));
    return send(reply, 200, resetForm(area, tokenOf(request), null));
  });
  scope.post(`${path}/:token`, async (request, reply) => {
    const token = tokenOf(request);
    if (!sameOrigin(request)) return send(reply, 403, resetForm(area, token, FOREIGN_FORM));
    const form = formOf(request);
    try {
      await resetPassword(ctx.db, {
        realm: area,
        token,
        password: form.password ?? "",
        confirm: form.confirm ?? "",
        ip: request.ip,
      });
      return seeOther(reply, `${AREA_HOME[area]}/sign-in?password_set=1`);
    } catch (error) {
      if (error instanceof LinkRefused)
        return send(reply, 410, refusedPage(area, "Password reset", error.refusal));
      if (error instanceof ApiError && error.code === "invalid_request")
        return send(reply, 400, resetForm(area, token, error.message));
      throw error;
    }
  });
}

/** Registered beside the sign-in pages, under /console: no session needed. */
export function linkPages(scope: App, ctx: AppContext): void {
  invitationPages(scope, ctx, "partner", "/invitations");
  invitationPages(scope, ctx, "operator", "/admin/invitations");
  resetPages(scope, ctx, "partner", "/password-reset");
  resetPages(scope, ctx, "operator", "/admin/password-reset");
}

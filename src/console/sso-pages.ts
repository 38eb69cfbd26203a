// Single sign-on in the partner console (issue 31). An owner sets the team's OpenID provider at
// /console/team/sso (permission `security.write`: 403 for every other role, nothing changed).
// Anyone signs in from /console/sign-in with the "Sign in with SSO" link: /console/sso asks the work
// email, /console/sso/start finds the team by its domain and sends the browser to the provider; the provider sends it back to
// /console/sso/callback, which finishes the sign-in (people/sign-in-with-sso.ts) and starts the
// session as the password sign-in does (beginSession: a second factor is still asked when owed).
//
// The attempt's cookie is SameSite=Lax, not Strict as the session's: the provider's redirect back
// is a top-level GET from another site, which a Strict cookie would not follow. It holds only a
// random id (the database keeps its hash), for 10 minutes, and the callback spends it once.
// The start answers with a page that moves on to the provider (meta refresh, and a link), not a
// redirect: the console's CSP (`form-action 'self'`) would block a form's redirect to another site.
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  readSsoSettings,
  removeSsoSettings,
  type SsoSettings,
  saveSsoSettings,
} from "../people/configure-sso.ts";
import { can } from "../people/roles.ts";
import {
  ATTEMPT_MINUTES,
  finishSsoSignIn,
  type SsoRefusal,
  startSsoSignIn,
} from "../people/sign-in-with-sso.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { actorOf } from "../shared/http-types.ts";
import { readsQuery } from "../shared/query-names.ts";
import { type Html, html } from "./html.ts";
import { csrfField, notice, page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import {
  consoleOrigin,
  cookie,
  formOf,
  partnerOf,
  queryValue,
  sameOrigin,
  secure,
  seeOther,
  sessionOf,
} from "./request.ts";
import { partnerShell } from "./shells.ts";
import { beginSession } from "./sign-in-pages.ts";

const HOME = "/console/team/sso";
const CALLBACK = "/console/sso/callback";
/** What a provider may add to its redirect back (RFC 6749, RFC 9207, OpenID session management, Google's). */
const CALLBACK_QUERY = [
  "code",
  "state",
  "iss",
  "session_state",
  "error",
  "error_description",
  "error_uri",
  "scope",
  "authuser",
  "hd",
  "prompt",
];

function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

function attemptCookieName(request: FastifyRequest, ctx: AppContext): string {
  return secure(request, ctx.config.app_env) ? "__Host-console_sso" : "console_sso";
}

function setAttemptCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: AppContext,
  value: string,
  max_age_s: number,
): void {
  const hosted = secure(request, ctx.config.app_env);
  const attributes = [
    hosted ? "Path=/" : "Path=/console/sso",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${max_age_s}`,
  ];
  if (hosted) attributes.push("Secure");
  reply.header("set-cookie", `${attemptCookieName(request, ctx)}=${value}; ${attributes.join("; ")}`);
}

/** The callback the provider was told: this console's origin (PUBLIC_BASE_URL in production). */
function redirectUri(request: FastifyRequest, ctx: AppContext): string {
  return `${consoleOrigin(request, ctx.config)}${CALLBACK}`;
}

function refusalPage(title: string, detail: string): string {
  return page(
    title,
    { area: "partner" },
    html`<div class="panel"><p>${detail}</p><p><a href="/console/sign-in">Back to sign-in</a></p></div>`,
  );
}

/** A refusal with a cause (the provider's or openid-client's words) is logged for the operator. */
function logRefusal(request: FastifyRequest, refusal: SsoRefusal): void {
  if (refusal.cause !== undefined)
    request.log.warn({ sso: refusal.title, cause: refusal.cause }, "single sign-on refused");
}

/** The work email asked first: its domain names the team, and so the provider. */
function ssoStartPage(message: string | null, email = ""): string {
  return page(
    "Sign in with SSO",
    { area: "partner" },
    html`<div class="panel">
      ${message === null ? "" : notice("error", message)}
      <form method="post" action="/console/sso/start">
        <label for="sso-email">Work email</label>
        <input id="sso-email" name="email" type="email" autocomplete="username" required maxlength="254" value="${email}">
        <div class="actions"><button type="submit">Continue</button></div>
      </form>
      <p><a href="/console/sign-in">Sign in with a password</a></p>
    </div>`,
  );
}

/** /console/sso, its start and the callback: outside the area's session check. */
export function ssoSignInPages(scope: App, ctx: AppContext): void {
  scope.get("/sso", async (_request, reply) => sendHtml(reply, 200, ssoStartPage(null)));

  scope.post("/sso/start", async (request, reply) => {
    if (!sameOrigin(request))
      return sendHtml(reply, 403, ssoStartPage("Sign in from this console's own page."));
    const email = (formOf(request).email ?? "").slice(0, 254);
    const started = await startSsoSignIn(ctx, {
      email,
      redirect_uri: redirectUri(request, ctx),
      ip: request.ip,
    });
    if (started.kind === "refused") {
      logRefusal(request, started);
      if (started.status === 429) reply.header("retry-after", String(ATTEMPT_MINUTES * 60));
      return sendHtml(reply, started.status, ssoStartPage(started.detail, email));
    }
    setAttemptCookie(request, reply, ctx, started.attempt_id, ATTEMPT_MINUTES * 60);
    const target = started.authorization_url;
    const body = page(
      "Sign in with SSO",
      { area: "partner" },
      html`<div class="panel"><p>Continuing to your identity provider…</p>
        <p><a class="button" href="${target}">Continue to your identity provider</a></p></div>`,
    ).replace("</head>", html`<meta http-equiv="refresh" content="0; url=${target}">\n</head>`.text);
    return sendHtml(reply, 200, body);
  });

  scope.get("/sso/callback", readsQuery(...CALLBACK_QUERY), async (request, reply) => {
    const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : "";
    const finished = await finishSsoSignIn(ctx, {
      attempt_id: cookie(request, attemptCookieName(request, ctx)),
      query,
      ip: request.ip,
    });
    setAttemptCookie(request, reply, ctx, "", 0);
    if (finished.kind === "refused") {
      logRefusal(request, finished);
      return sendHtml(reply, finished.status, refusalPage(finished.title, finished.detail));
    }
    return seeOther(reply, await beginSession(request, reply, ctx, finished.user, "sso"));
  });
}

function requireSecurityWrite(request: FastifyRequest): void {
  if (!can("partner", sessionOf(request).role, "security.write"))
    throw new ApiError("forbidden", "Only an owner of the team sets up single sign-on.");
}

function settingsForm(csrf: string, current: SsoSettings | null, values: Record<string, string>): Html {
  const v = (name: string, fallback: string) => values[name] ?? fallback;
  return html`<form method="post" action="${HOME}" class="panel">${csrfField(csrf)}
    <div class="fields">
      <div class="wide"><label for="issuer">Issuer</label>
        <input id="issuer" name="issuer" type="url" required maxlength="500" value="${v("issuer", current?.issuer ?? "")}" placeholder="https://login.example.com" aria-describedby="issuer-hint">
        <p class="hint" id="issuer-hint">Your OpenID provider's issuer URL (https, on a public address); its discovery document is read when you save.</p></div>
      <div class="wide"><label for="client_id">Client ID</label>
        <input id="client_id" name="client_id" required maxlength="255" value="${v("client_id", current?.client_id ?? "")}"></div>
      <div class="wide"><label for="client_secret">Client secret</label>
        <input id="client_secret" name="client_secret" type="password" autocomplete="off" maxlength="500"${current ? "" : html` required`} aria-describedby="secret-hint">
        <p class="hint" id="secret-hint">${current ? "Leave blank to keep the secret already set; it is never shown again." : "Stored encrypted; never shown again."}</p></div>
      <div class="wide"><label for="domains">Email domains</label>
        <textarea id="domains" name="domains" required spellcheck="false" aria-describedby="domains-hint">${v("domains", current?.domains.join("\n") ?? "")}</textarea>
        <p class="hint" id="domains-hint">One per line. People of these domains sign in with SSO and join as viewers unless you gave them another role.</p></div>
    </div>
    <p class="hint">Register this redirect URI with your provider: <span class="mono">${values.redirect_uri ?? ""}</span></p>
    <div class="actions"><button type="submit">Save single sign-on</button></div>
  </form>`;
}

async function settingsPage(
  request: FastifyRequest,
  ctx: AppContext,
  top: Html | string,
  values: Record<string, string> = {},
): Promise<string> {
  const shell = await partnerShell(request, ctx, HOME);
  const csrf = shell.signed_in!.csrf;
  const current = await readSsoSettings(ctx.db, partnerOf(request));
  const remove = current
    ? html`<h2>Turn single sign-on off</h2><form method="post" action="${HOME}/remove" class="panel">${csrfField(csrf)}
        <p>Your people then sign in with their passwords (those who joined through SSO reset theirs first).</p>
        <div class="actions"><button type="submit" class="danger">Remove single sign-on</button></div></form>`
    : "";
  const state = current
    ? html`<p>Single sign-on is on for ${current.domains.join(", ")}.</p>`
    : html`<p>Single sign-on is off.</p>`;
  const form = settingsForm(csrf, current, { redirect_uri: redirectUri(request, ctx), ...values });
  return page("Single sign-on", shell, html`${top}${state}${form}${remove}`);
}

const MESSAGES: Record<string, string> = {
  saved: "Single sign-on is saved.",
  removed: "Single sign-on is removed.",
};

export const partnerSsoPages: ConsolePages = (scope, ctx) => {
  scope.get("/team/sso", readsQuery(...Object.keys(MESSAGES)), async (request, reply) => {
    requireSecurityWrite(request);
    const shown = Object.keys(MESSAGES).find((name) => queryValue(request, name) !== null);
    return sendHtml(
      reply,
      200,
      await settingsPage(request, ctx, shown ? notice("ok", MESSAGES[shown]!) : ""),
    );
  });

  scope.post("/team/sso", async (request, reply) => {
    requireSecurityWrite(request);
    const form = formOf(request);
    const input = {
      issuer: form.issuer ?? "",
      client_id: form.client_id ?? "",
      client_secret: form.client_secret ?? null,
      domains: form.domains ?? "",
    };
    const refused = await saveSsoSettings(ctx, actorOf(request), partnerOf(request), input);
    if (refused === null) return seeOther(reply, `${HOME}?saved=1`);
    const { client_secret: _secret, ...shown } = input;
    return sendHtml(
      reply,
      refused.status,
      await settingsPage(request, ctx, notice("error", refused.message), shown),
    );
  });

  scope.post("/team/sso/remove", async (request, reply) => {
    requireSecurityWrite(request);
    await removeSsoSettings(ctx, actorOf(request), partnerOf(request));
    return seeOther(reply, `${HOME}?removed=1`);
  });
};

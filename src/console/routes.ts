// The web console under /console (issue 17): server-rendered pages, plain HTML forms, no script.
// Beside the API on the top floor: every page calls the same use cases as the API routes and the
// CLI, and a change made here is exactly as exactly-once as through the API (the top-up form
// carries an Idempotency-Key, a credit its reference). Two areas: the partner's (/console) and the
// operator's (/console/admin), each signed in to by its own people (issue 31).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { FastifyReply, FastifyRequest } from "fastify";
import { partnerSuspended } from "../partners/list-partners.ts";
import { suspensionExemption } from "../partners/suspension-exemptions.ts";
import { warmDecoy } from "../people/passwords.ts";
import { csrfToken, csrfTokenMatches, findSession, type SessionKind } from "../people/sessions.ts";
import type { AppContext } from "../shared/context.ts";
import {
  databaseBusy,
  databaseUnreachable,
  isDatabaseBusy,
  isDatabaseUnreachable,
} from "../shared/database-busy.ts";
import { ApiError, ERROR_CODES } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { CONSOLE_CSP } from "./csp.ts";
import { html } from "./html.ts";
import { type Area, page } from "./layout.ts";
import { linkPages } from "./link-pages.ts";
import { operatorAuditLogPages } from "./operator-audit-log.ts";
import { operatorCatalogPages } from "./operator-catalog.ts";
import { operatorLedgerPages } from "./operator-ledger.ts";
import { operatorOrderDetailPages } from "./operator-order.ts";
import { operatorOrderPages } from "./operator-orders.ts";
import { operatorMoneyPages } from "./operator-partner-money.ts";
import { operatorPartnerPages } from "./operator-partners.ts";
import type { ConsolePages, SignInFailures } from "./pages.ts";
import { partnerAuditLogPages } from "./partner-audit-log.ts";
import { partnerEsimPages } from "./partner-esims.ts";
import { partnerKeyPages } from "./partner-keys.ts";
import { partnerOrderPages } from "./partner-orders.ts";
import { partnerOverviewPages } from "./partner-overview.ts";
import { partnerWalletPages } from "./partner-wallet.ts";
import { partnerWebhookPages } from "./partner-webhooks.ts";
import { assertRouteHasPermission, mayUseRoute, routePermission } from "./permissions.ts";
import {
  cookie,
  formOf,
  knownSession,
  rememberSession,
  sameOrigin,
  seeOther,
  sessionCookieName,
} from "./request.ts";
import { operatorSignOut, partnerSignOut, secondFactorPath, signInPages } from "./sign-in-pages.ts";
import { partnerSsoPages, ssoSignInPages } from "./sso-pages.ts";
import { operatorPeoplePages, partnerTeamPages } from "./team-pages.ts";
import { operatorTwoFactorPages, partnerTwoFactorPages } from "./two-factor-pages.ts";

/**
 * Takes one request from a rate-limit bucket, or throws 429 `rate_limited` with Retry-After: the
 * server's limiter, passed in. A partner's console spends the bucket `console:<partner_id>`.
 */
export type KeyBudget = (bucket: string) => void;

/** Fields per form: the largest (pricing) has a handful. */
const MAX_FORM_FIELDS = 50;

const STYLESHEET = readFileSync(new URL("./console.css", import.meta.url));
/**
 * The passkey pages' scripts, served from this origin: @simplewebauthn/browser's single-file bundle
 * (its UMD build: the package ships no one-file ESM bundle; loaded as a classic script it defines
 * `SimpleWebAuthnBrowser`) and the console's own passkeys.js, which uses it.
 */
const WEBAUTHN_SCRIPT = readFileSync(
  new URL(
    "../dist/bundle/index.umd.min.js",
    `file://${createRequire(import.meta.url).resolve("@simplewebauthn/browser")}`,
  ),
);
const PASSKEYS_SCRIPT = readFileSync(new URL("./passkeys.js", import.meta.url));

const PARTNER_PAGES: ConsolePages[] = [
  partnerOverviewPages,
  partnerOrderPages,
  partnerEsimPages,
  partnerWalletPages,
  partnerKeyPages,
  partnerWebhookPages,
  partnerAuditLogPages,
  partnerTeamPages,
  partnerTwoFactorPages,
  partnerSsoPages,
  partnerSignOut,
];
const OPERATOR_PAGES: ConsolePages[] = [
  operatorPartnerPages,
  operatorMoneyPages,
  operatorOrderPages,
  operatorOrderDetailPages,
  operatorCatalogPages,
  operatorLedgerPages,
  operatorAuditLogPages,
  operatorPeoplePages,
  operatorTwoFactorPages,
  operatorSignOut,
];

export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

function areaOf(request: FastifyRequest): Area {
  return request.url.startsWith("/console/admin") ? "operator" : "partner";
}

/** The page of a refusal or error: with the area's nav when the request had a session. */
function refusal(request: FastifyRequest, ctx: AppContext, title: string, detail: string): string {
  const area = areaOf(request);
  const home = area === "operator" ? "/console/admin" : "/console";
  const session = knownSession(request);
  const signed_in = session && {
    csrf: csrfToken(session.session_id),
    role: session.role,
    who: area === "operator" ? "Operator" : "",
    sandbox: ctx.config.app_env === "sandbox",
  };
  return page(
    title,
    signed_in ? { area, signed_in } : { area },
    html`<div class="panel"><p>${detail}</p><p><a href="${home}">Back to the console</a></p></div>`,
  );
}

/** An error in a console handler: the same codes and messages as the API, as a page. */
function errorHandler(ctx: AppContext) {
  return (thrown: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    // A database busy for a moment (no connection in time, a deadlock, a cancelled statement: the
    // transaction rolled back whole) is the API's 503 with Retry-After here too, never a 500 page.
    // A database away for a moment (a restart, a failover) likewise.
    const busy = isDatabaseBusy(thrown);
    const away = !busy && isDatabaseUnreachable(thrown);
    if (busy || away) request.log.warn({ err: thrown }, "console page: database busy or away (answered 503)");
    const error = busy ? databaseBusy() : away ? databaseUnreachable() : thrown;
    if (error instanceof ApiError && error.code !== "internal_error") {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return sendPage(
        reply,
        error.status,
        refusal(request, ctx, ERROR_CODES[error.code].title, error.message),
      );
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (typeof status === "number" && status >= 400 && status < 500) {
      // A form that fails the API's schema: Fastify's message names the field (`body/email must …`).
      const detail = (error as { validation?: unknown }).validation
        ? (error as Error).message
        : "Go back and try again.";
      return sendPage(reply, status, refusal(request, ctx, "The form could not be accepted.", detail));
    }
    request.log.error({ err: error }, "console page failed");
    const detail = `Nothing more is known here; quote request ${request.id} to support.`;
    return sendPage(reply, 500, refusal(request, ctx, "Something went wrong.", detail));
  };
}

/**
 * Every page of an area needs a person's session of its kind, looked up before the body is read: a
 * GET without one goes to the sign-in page, a change is refused (401) and its body never parsed. A
 * session that still owes a second factor opens only the pages that finish signing in. A partner's
 * pages then spend a token of its partner's console budget, as its API keys spend theirs: a page
 * load costs the service what an API call does, so the console is no way around the limit. Over
 * it, the area's 429 page with Retry-After.
 */
function requireSession(ctx: AppContext, kind: SessionKind, budget: KeyBudget) {
  const home = kind === "operator" ? "/console/admin" : "/console";
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const name = sessionCookieName(request, ctx.config.app_env, kind);
    const session = await findSession(ctx.db, ctx.config, cookie(request, name), kind);
    if (!session) {
      if (request.method === "GET") return seeOther(reply, `${home}/sign-in?ended=1`);
      const detail = "Sign in again. Nothing was changed.";
      return sendPage(reply, 401, refusal(request, ctx, "Your session has ended", detail));
    }
    rememberSession(request, session);
    // The operator's staff act as the operator (the partner's log tells its own people from the
    // operator's), named by their person's id; a partner's people as users.
    request.actor = {
      type: kind === "operator" ? "operator" : "user",
      id: session.user_id,
      email: session.email,
      ip: request.ip,
    };
    if (session.stage !== "signed_in" && !finishesSignIn(request.url, home)) {
      return seeOther(reply, secondFactorPath(kind, session.stage));
    }
    if (session.partner_id !== null) budget(`console:${session.partner_id}`);
    if (!mayUseRoute(kind, session.role, request)) {
      const detail = `Your role (${session.role}) does not allow this page or form. Nothing was changed.`;
      return sendPage(reply, 403, refusal(request, ctx, ERROR_CODES.forbidden.title, detail));
    }
    if (session.partner_id !== null && (await suspendedChange(ctx, request, session.partner_id))) {
      return sendPage(
        reply,
        403,
        refusal(request, ctx, ERROR_CODES.partner_suspended.title, SUSPENDED_DETAIL),
      );
    }
  };
}

/**
 * A change a suspended partner's people may not make (issue 32): every form but those of their own
 * account (a second factor, a passkey) and signing out (the `signed_in` rows of permissions.ts), so
 * a suspended team's people can still secure and leave their accounts, and those that only take
 * access away (partners/suspension-exemptions.ts). A form whose direction its body tells (disabling
 * a person, not enabling one) is checked once read, by refuseSuspendedForm. Reads cost no query here.
 */
async function suspendedChange(
  ctx: AppContext,
  request: FastifyRequest,
  partner_id: string,
): Promise<boolean> {
  if (request.method === "GET" || request.method === "HEAD") return false;
  const url = request.routeOptions.url;
  if (url === undefined || routePermission("partner", request.method, url) === "signed_in") return false;
  if (suspensionExemption(request.method, url) !== undefined) return false;
  return partnerSuspended(ctx.db, partner_id);
}

const SUSPENDED_DETAIL =
  "The operator suspended your account: you can look at everything, but nothing can be changed until it is " +
  "reactivated, except revoking keys, disabling people and deleting webhook endpoints. Nothing was changed.";

/** After the CSRF check: a form exempt only in one direction (suspension-exemptions.ts) going the other. */
function refuseSuspendedForm(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const exemption = suspensionExemption(request.method, request.routeOptions.url);
    if (typeof exemption !== "function" || exemption(formOf(request))) return;
    const session = knownSession(request);
    if (session?.partner_id == null || !(await partnerSuspended(ctx.db, session.partner_id))) return;
    return sendPage(reply, 403, refusal(request, ctx, ERROR_CODES.partner_suspended.title, SUSPENDED_DETAIL));
  };
}

/** The pages a session that owes a second factor may open: giving it, enrolling one, signing out. */
function finishesSignIn(url: string, home: string): boolean {
  const path = url.split("?")[0]!;
  const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  return (
    under(`${home}/sign-in/second-factor`) ||
    under(`${home}/account/two-factor`) ||
    path === `${home}/sign-out` ||
    under(`${home}/assets`)
  );
}

/** Every change, once its form is read: the session's CSRF token and a same-origin request (403). */
function requireCsrf(ctx: AppContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    const session = knownSession(request);
    if (session && sameOrigin(request) && csrfTokenMatches(session.session_id, formOf(request)._csrf)) return;
    const detail = "Reload the page and try again. Nothing was changed.";
    return sendPage(reply, 403, refusal(request, ctx, "This form has expired", detail));
  };
}

/** A form's fields as strings; an empty field is an absent one (an optional field left blank is null). */
function formFields(entries: Iterable<[string, string]>): Record<string, string> {
  const form: Record<string, string> = {};
  let fields = 0;
  for (const [name, value] of entries) {
    if (++fields > MAX_FORM_FIELDS) throw new ApiError("invalid_request", "Too many form fields.");
    const trimmed = value.trim();
    if (trimmed !== "") form[name] = trimmed;
  }
  return form;
}

function parseForm(
  _request: FastifyRequest,
  body: string,
  done: (error: Error | null, body?: unknown) => void,
) {
  try {
    done(null, formFields(new URLSearchParams(body)));
  } catch (error) {
    done(error as Error);
  }
}

/**
 * multipart/form-data (the catalog file), parsed by the platform's own Response.formData(): the body
 * is already bounded by the route's bodyLimit, and a file's content becomes its field's text.
 */
async function parseMultipart(request: FastifyRequest, body: Buffer): Promise<Record<string, string>> {
  const type = request.headers["content-type"] ?? "";
  let parsed: FormData;
  try {
    parsed = await new Response(new Uint8Array(body), { headers: { "content-type": type } }).formData();
  } catch {
    throw new ApiError("invalid_request", "The form's multipart body could not be read.");
  }
  const entries: Array<[string, string]> = [];
  for (const [name, value] of parsed)
    entries.push([name, typeof value === "string" ? value : await value.text()]);
  return formFields(entries);
}

export async function consoleRoutes(
  app: App,
  ctx: AppContext,
  failures: SignInFailures,
  budget: KeyBudget,
): Promise<void> {
  warmDecoy();
  await app.register(
    async (scope) => {
      scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, parseForm);
      scope.addContentTypeParser(
        "multipart/form-data",
        { parseAs: "buffer" },
        (request: FastifyRequest, body: string | Buffer) => parseMultipart(request, body as Buffer),
      );
      // Pages of people's money: never cached, never framed, and no script at all.
      scope.addHook("onRequest", (_request, reply, done) => {
        reply.header("content-security-policy", CONSOLE_CSP);
        reply.header("cache-control", "no-store");
        // The API's no-referrer would make the browser send `Origin: null` with the console's own
        // forms; same-origin keeps the origin on them (the CSRF check reads it) and off other sites.
        reply.header("referrer-policy", "same-origin");
        done();
      });
      // Not part of the API: kept out of the OpenAPI document.
      scope.addHook("onRoute", (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      scope.setErrorHandler(errorHandler(ctx));
      scope.get("/assets/console.css", async (_request, reply) =>
        reply
          .type("text/css; charset=utf-8")
          .header("cache-control", "public, max-age=3600")
          .send(STYLESHEET),
      );
      for (const [name, body] of [
        ["webauthn.js", WEBAUTHN_SCRIPT],
        ["passkeys.js", PASSKEYS_SCRIPT],
      ] as const) {
        scope.get(`/assets/${name}`, async (_request, reply) =>
          reply
            .type("text/javascript; charset=utf-8")
            .header("cache-control", "public, max-age=3600")
            .send(body),
        );
      }
      signInPages(scope as App, ctx, failures);
      linkPages(scope as App, ctx);
      ssoSignInPages(scope as App, ctx);
      await scope.register(async (partner) => {
        partner.addHook("onRoute", (route) => assertRouteHasPermission("partner", route.method, route.url));
        partner.addHook("onRequest", requireSession(ctx, "partner", budget));
        partner.addHook("preValidation", requireCsrf(ctx));
        partner.addHook("preValidation", refuseSuspendedForm(ctx));
        for (const pages of PARTNER_PAGES) pages(partner as App, ctx, failures);
      });
      await scope.register(
        async (operator) => {
          operator.addHook("onRoute", (route) =>
            assertRouteHasPermission("operator", route.method, route.url),
          );
          operator.addHook("onRequest", requireSession(ctx, "operator", budget));
          operator.addHook("preValidation", requireCsrf(ctx));
          for (const pages of OPERATOR_PAGES) pages(operator as App, ctx, failures);
        },
        { prefix: "/admin" },
      );
    },
    { prefix: "/console" },
  );
}

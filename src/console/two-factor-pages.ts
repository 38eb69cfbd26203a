// The second factor in the console (issue 31), for partner and operator people alike: the account's
// Two-factor page (an authenticator app enrolled with a QR code and a first code, passkeys added,
// named and removed, recovery codes regenerated) and the sign-in's second step
// (`/sign-in/second-factor`: a TOTP code, a recovery code, or a passkey). A session that owes a
// second factor reaches only the second step; one whose team requires a factor it has not set up
// reaches only the Two-factor page, and is signed in once it has set one up. The pages that run
// WebAuthn load this origin's script files (CSP `script-src 'self'`); every other page has none.
import type { FastifyReply, FastifyRequest } from "fastify";
import { requiresTwoFactor } from "../partners/two-factor-policy.ts";
import {
  addPasskey,
  authenticationOptions,
  checkPasskey,
  listPasskeys,
  MAX_PASSKEY_NAME_LENGTH,
  type Passkey,
  type RelyingParty,
  registrationOptions,
  removePasskey,
} from "../people/passkeys.ts";
import {
  checkSecondFactorCode,
  confirmTotpEnrolment,
  disableTotp,
  pendingTotpEnrolment,
  RECOVERY_CODE_COUNT,
  regenerateRecoveryCodes,
  startTotpEnrolment,
  unusedRecoveryCodes,
} from "../people/second-factor.ts";
import { type ConsoleSession, csrfToken } from "../people/sessions.ts";
import { groupedSeed } from "../people/totp.ts";
import { findUser, type UserRow } from "../people/users.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { qrCodePng } from "../shared/qr-code-png.ts";
import { readsQuery } from "../shared/query-names.ts";
import { CONSOLE_CSP_WITH_SCRIPT } from "./csp.ts";
import { type Html, html } from "./html.ts";
import { type Area, csrfField, notice, page, type Shell, scrollTable } from "./layout.ts";
import type { ConsolePages, SignInFailures } from "./pages.ts";
import { consoleOrigin, formOf, queryValue, seeOther, sessionOf } from "./request.ts";
import { operatorShell, partnerShell } from "./shells.ts";
import { AREA_HOME, completeSignIn } from "./sign-in-pages.ts";

const QR_SIZE_PX = 224;
const SCRIPTS = ["/console/assets/webauthn.js", "/console/assets/passkeys.js"] as const;

const DONE: Record<string, string> = {
  totp_removed: "The authenticator app is removed.",
  passkey_removed: "The passkey is removed.",
};

/** One request of a person's: `session` is replaced when enrolling finishes signing in. */
type Ctx = { request: FastifyRequest; ctx: AppContext; area: Area; session: ConsoleSession; user: UserRow };

function sendPage(reply: FastifyReply, status: number, body: string, script = false): FastifyReply {
  if (script) reply.header("content-security-policy", CONSOLE_CSP_WITH_SCRIPT);
  return reply.code(status).type("text/html; charset=utf-8").send(body);
}

/**
 * The console as a WebAuthn relying party: in production its public address (PUBLIC_BASE_URL, https),
 * never the Host header, which whoever sends the request writes; in the sandbox, where the console
 * is also reached as localhost or by a test's port, the host this request came to.
 */
function relyingParty(request: FastifyRequest, ctx: AppContext): RelyingParty {
  const origin = consoleOrigin(request, ctx.config);
  return { rp_id: new URL(origin).hostname, origin, rp_name: "eSIM console" };
}

async function personOf(request: FastifyRequest, ctx: AppContext, area: Area): Promise<Ctx> {
  const session = sessionOf(request);
  const user = await findUser(ctx.db, session.user_id);
  if (user === null) throw new ApiError("unauthorized", "Sign in again.");
  return { request, ctx, area, session, user };
}

/** The signed-in shell (nav and all), or, while signing in is unfinished, the page alone and sign-out. */
async function shellOf(c: Ctx, scripts: boolean): Promise<{ shell: Shell; sign_out: Html }> {
  const extra = scripts ? { scripts: SCRIPTS } : {};
  const home = AREA_HOME[c.area];
  if (c.session.stage !== "signed_in") {
    const sign_out = html`<form method="post" action="${home}/sign-out" class="actions">
      ${csrfField(csrfToken(c.session.session_id))}<button type="submit" class="quiet">Sign out</button></form>`;
    return { shell: { area: c.area, ...extra }, sign_out };
  }
  const current = `${home}/account/two-factor`;
  const shell =
    c.area === "partner"
      ? await partnerShell(c.request, c.ctx, current)
      : operatorShell(c.request, c.ctx, current);
  return { shell: { ...shell, ...extra }, sign_out: html`` };
}

// --- The Two-factor page --------------------------------------------------------------------------

function passkeyRows(home: string, csrf: string, keys: Passkey[]): Html {
  if (keys.length === 0) return html`<p>No passkeys yet.</p>`;
  return scrollTable(
    "Your passkeys",
    html`<table><thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead><tbody>${keys.map(
      (k) => html`<tr><td>${k.name}</td><td>${k.created_at.toISOString().slice(0, 16).replace("T", " ")}</td>
        <td>${k.last_used_at?.toISOString().slice(0, 16).replace("T", " ") ?? "never"}</td>
        <td><form method="post" action="${home}/account/two-factor/passkeys/${k.credential_id}/remove">${csrfField(csrf)}
          <button type="submit" class="danger" aria-label="Remove passkey ${k.name}">Remove</button></form></td></tr>`,
    )}</tbody></table>`,
  );
}

async function totpPanel(c: Ctx, csrf: string): Promise<Html> {
  const home = AREA_HOME[c.area];
  if (c.user.totp_secret_sealed !== null) {
    return html`<p>An authenticator app is set up: at sign-in, you give the 6-digit code it shows.</p>
      <form method="post" action="${home}/account/two-factor/totp/remove">${csrfField(csrf)}
        <label for="remove-code">Code from the app (or a recovery code), to remove it</label>
        <input id="remove-code" name="code" autocomplete="one-time-code" maxlength="40" required>
        <div class="actions"><button type="submit" class="danger">Remove the authenticator app</button></div></form>`;
  }
  const pending = await pendingTotpEnrolment(c.ctx.db, c.ctx.config, {
    session_id: c.session.session_id,
    user: c.user,
  });
  if (pending === null) {
    return html`<p>Use an app such as 1Password, Google Authenticator or Aegis: it shows a new 6-digit code every 30 seconds.</p>
      <form method="post" action="${home}/account/two-factor/totp" class="actions">${csrfField(csrf)}
        <button type="submit">Set up an authenticator app</button></form>`;
  }
  return html`<ol>
      <li>Scan this QR code with your authenticator app:
        <div class="qr"><img src="${home}/account/two-factor/totp.png" alt="QR code for your authenticator app" width="${QR_SIZE_PX}" height="${QR_SIZE_PX}"></div></li>
      <li>or type this key into it: <span class="mono" id="totp-secret">${groupedSeed(pending.seed)}</span></li>
      <li>Then give the code the app shows, to turn it on.</li>
    </ol>
    <form method="post" action="${home}/account/two-factor/totp/confirm">${csrfField(csrf)}
      <label for="totp-code">Code from the app</label>
      <input id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required>
      <div class="actions"><button type="submit">Turn on</button></div>
    </form>`;
}

async function accountPage(c: Ctx, top: Html): Promise<string> {
  const home = AREA_HOME[c.area];
  const csrf = csrfToken(c.session.session_id);
  const { shell, sign_out } = await shellOf(c, true);
  const keys = await listPasskeys(c.ctx.db, c.user.user_id);
  const options = await registrationOptions(c.ctx.db, {
    session_id: c.session.session_id,
    user: c.user,
    rp: relyingParty(c.request, c.ctx),
  });
  const has_factor = c.user.totp_secret_sealed !== null || keys.length > 0;
  const left = has_factor ? await unusedRecoveryCodes(c.ctx.db, c.user.user_id) : 0;
  const required =
    c.session.stage === "enrol_second_factor"
      ? notice(
          "error",
          "Your team requires a second factor. Set up an authenticator app or a passkey to continue.",
        )
      : html``;
  const body = html`${required}${top}
    <section class="panel" aria-labelledby="totp-heading"><h2 id="totp-heading">Authenticator app</h2>${await totpPanel(c, csrf)}</section>
    <section class="panel" aria-labelledby="passkeys-heading"><h2 id="passkeys-heading">Passkeys</h2>
      <p>A passkey signs you in with your device's fingerprint, face or PIN, or a security key.</p>
      ${passkeyRows(home, csrf, keys)}
      <form method="post" action="${home}/account/two-factor/passkeys" data-passkey="register" data-options="${JSON.stringify(options)}">${csrfField(csrf)}
        <label for="passkey-name">Name of the new passkey</label>
        <input id="passkey-name" name="name" maxlength="${MAX_PASSKEY_NAME_LENGTH}" placeholder="Work laptop" required>
        <input type="hidden" name="response" value="">
        <p class="notice error" role="alert" data-passkey-error hidden></p>
        <div class="actions"><button type="submit">Add a passkey</button></div>
      </form>
    </section>
    <section class="panel" aria-labelledby="recovery-heading"><h2 id="recovery-heading">Recovery codes</h2>
      ${
        has_factor
          ? html`<p>${left} of ${RECOVERY_CODE_COUNT} recovery codes unused. Each signs you in once when you cannot use your app or passkey.</p>
            <form method="post" action="${home}/account/two-factor/recovery-codes" class="actions">${csrfField(csrf)}
              <button type="submit" class="quiet">Make new recovery codes (the old ones stop working)</button></form>`
          : html`<p>Ten recovery codes are made when you set up your first second factor.</p>`
      }
    </section>${sign_out}`;
  return page("Two-factor sign-in", shell, body);
}

/** The page that shows new recovery codes, once; after enrolment in the team's required stage, signed in. */
async function codesPage(
  c: Ctx,
  heading: string,
  codes: string[] | null,
  just_signed_in = false,
): Promise<string> {
  const home = AREA_HOME[c.area];
  const { shell } = await shellOf(c, false);
  const list =
    codes === null
      ? html``
      : html`<p>Your recovery codes, shown this once. Keep them somewhere safe (a password manager): each
        signs you in once, instead of a code from your app or a passkey.</p>
        <ul class="mono recovery-codes" aria-label="Recovery codes">${codes.map((code) => html`<li>${code}</li>`)}</ul>`;
  const next = just_signed_in
    ? html`<p><a href="${home}">Continue to the console</a></p>`
    : html`<p><a href="${home}/account/two-factor">Back to Two-factor sign-in</a></p>`;
  return page(
    "Two-factor sign-in",
    shell,
    html`<div class="panel">${notice("ok", heading)}${list}${next}</div>`,
  );
}

/**
 * A person of a team that requires a second factor has just set one up: signed in now (the page
 * that shows their recovery codes then says to continue to the console). False: was signed in already.
 */
async function finishEnrolment(c: Ctx, reply: FastifyReply, method: "totp" | "passkey"): Promise<boolean> {
  if (c.session.stage !== "enrol_second_factor") return false;
  c.session = await completeSignIn(c.request, reply, c.ctx, method);
  return true;
}

/** Whether removing one factor (of the ones the person holds) would leave a required second factor unmet. */
async function lastRequiredFactor(c: Ctx, removing: "totp" | "passkey"): Promise<boolean> {
  if (c.user.partner_id === null || !(await requiresTwoFactor(c.ctx.db, c.user.partner_id))) return false;
  const keys = (await listPasskeys(c.ctx.db, c.user.user_id)).length;
  const totp = c.user.totp_secret_sealed !== null ? 1 : 0;
  return removing === "totp" ? keys === 0 : totp + keys <= 1;
}

/** How recent a sign-in must be to change a second factor (add, remove, new recovery codes). */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

function accountPages(area: Area): ConsolePages {
  return (scope, ctx, failures) => {
    const home = AREA_HOME[area];
    /** The account's pages are for people signed in, or enrolling; one who owes a second factor gives it first. */
    const person = async (request: FastifyRequest, reply: FastifyReply): Promise<Ctx | null> => {
      const session = sessionOf(request);
      if (session.stage === "second_factor") {
        seeOther(reply, `${home}/sign-in/second-factor`);
        return null;
      }
      // A session left open (or stolen) must not change the factors that protect the account: a
      // change needs a sign-in of the last few minutes (a new session, with its factor given).
      const age_ms = Date.now() - session.signed_in_at.getTime();
      if (request.method === "POST" && session.stage === "signed_in" && age_ms > RECENT_SIGN_IN_MS) {
        throw new ApiError(
          "forbidden",
          `To change your second factor, sign out and sign in again: a change needs a sign-in of the last ${RECENT_SIGN_IN_MS / 60_000} minutes.`,
        );
      }
      return personOf(request, ctx, area);
    };
    const show = async (c: Ctx, reply: FastifyReply, status: number, top: Html) =>
      sendPage(reply, status, await accountPage(c, top), true);

    scope.get("/account/two-factor", readsQuery(...Object.keys(DONE)), async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      const done = Object.keys(DONE).find((name) => queryValue(request, name) !== null);
      return show(c, reply, 200, done ? notice("ok", DONE[done]!) : html``);
    });
    scope.post("/account/two-factor/totp", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      if (c.user.totp_secret_sealed === null)
        await startTotpEnrolment(ctx.db, ctx.config, { session_id: c.session.session_id, user: c.user });
      return seeOther(reply, `${home}/account/two-factor`);
    });
    // The QR code of the enrolment this session started: the seed never travels in a URL.
    scope.get("/account/two-factor/totp.png", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      const pending = await pendingTotpEnrolment(ctx.db, ctx.config, {
        session_id: c.session.session_id,
        user: c.user,
      });
      if (pending === null) throw new ApiError("not_found", "No authenticator app is being set up.");
      return reply.type("image/png").send(await qrCodePng(pending.uri, QR_SIZE_PX));
    });
    scope.post("/account/two-factor/totp/confirm", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      const confirmed = await confirmTotpEnrolment(ctx.db, ctx.config, {
        session_id: c.session.session_id,
        user: c.user,
        code: formOf(request).code ?? "",
        actor: actorOf(request),
      });
      if (confirmed === false)
        return show(
          c,
          reply,
          400,
          notice("error", "That code is not right. Check the app's clock and try the next code."),
        );
      const signed_in = await finishEnrolment(c, reply, "totp");
      const body = await codesPage(c, "The authenticator app is on.", confirmed.recovery_codes, signed_in);
      return sendPage(reply, 200, body);
    });
    scope.post("/account/two-factor/totp/remove", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      if (await lastRequiredFactor(c, "totp"))
        return show(
          c,
          reply,
          400,
          notice("error", "Your team requires a second factor: add a passkey before removing the app."),
        );
      // Whoever holds the session must also hold the app (or a recovery code): a session left open
      // on a shared computer is not enough to turn the second factor off. A wrong code is a failure
      // like one at sign-in, throttled alike.
      try {
        await failures.attempt(request.ip, area, () =>
          checkSecondFactorCode(ctx.db, ctx.config, {
            user: c.user,
            code: formOf(request).code ?? "",
            ip: request.ip,
          }),
        );
      } catch (error) {
        if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 429)) throw error;
        for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
        return show(c, reply, error.status, notice("error", error.message));
      }
      await disableTotp(ctx.db, { user: c.user, actor: actorOf(request) });
      return seeOther(reply, `${home}/account/two-factor?totp_removed=1`);
    });
    scope.post("/account/two-factor/recovery-codes", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      const codes = await regenerateRecoveryCodes(ctx.db, { user: c.user, actor: actorOf(request) });
      return sendPage(
        reply,
        200,
        await codesPage(c, "New recovery codes are made; the old ones no longer work.", codes),
      );
    });
    scope.post("/account/two-factor/passkeys", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      const form = formOf(request);
      try {
        const added = await addPasskey(ctx.db, {
          session_id: c.session.session_id,
          user: c.user,
          rp: relyingParty(request, ctx),
          response: form.response ?? "",
          name: form.name ?? "",
          actor: actorOf(request),
        });
        const signed_in = await finishEnrolment(c, reply, "passkey");
        const body = await codesPage(c, "The passkey is added.", added.recovery_codes, signed_in);
        return sendPage(reply, 200, body);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
        return show(c, reply, 400, notice("error", error.message));
      }
    });
    scope.post("/account/two-factor/passkeys/:credential_id/remove", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      const { credential_id } = request.params as { credential_id: string };
      if (await lastRequiredFactor(c, "passkey"))
        return show(
          c,
          reply,
          400,
          notice("error", "Your team requires a second factor: set up another before removing this one."),
        );
      if (!(await removePasskey(ctx.db, { user: c.user, credential_id, actor: actorOf(request) })))
        throw new ApiError("not_found", "No such passkey of yours.");
      return seeOther(reply, `${home}/account/two-factor?passkey_removed=1`);
    });
  };
}

// --- The sign-in's second step --------------------------------------------------------------------

async function secondFactorPage(c: Ctx, top: Html): Promise<{ body: string; script: boolean }> {
  const home = AREA_HOME[c.area];
  const csrf = csrfToken(c.session.session_id);
  const options = await authenticationOptions(c.ctx.db, {
    session_id: c.session.session_id,
    user: c.user,
    rp: relyingParty(c.request, c.ctx),
  });
  const { shell, sign_out } = await shellOf(c, options !== null);
  const passkey =
    options === null
      ? html``
      : html`<form method="post" action="${home}/sign-in/second-factor/passkey" data-passkey="authenticate" data-options="${JSON.stringify(options)}">${csrfField(csrf)}
          <input type="hidden" name="response" value="">
          <p class="notice error" role="alert" data-passkey-error hidden></p>
          <div class="actions"><button type="submit">Use a passkey</button></div>
        </form>`;
  const code =
    c.user.totp_secret_sealed !== null
      ? "Enter the 6-digit code from your authenticator app, or one of your recovery codes."
      : "Use your passkey, or enter one of your recovery codes.";
  const body = html`<div class="panel">${top}
    ${passkey}
    <form method="post" action="${home}/sign-in/second-factor">${csrfField(csrf)}
      <label for="code">Code</label>
      <p class="hint" id="code-hint">${code}</p>
      <input id="code" name="code" autocomplete="one-time-code" aria-describedby="code-hint" maxlength="40" required>
      <div class="actions"><button type="submit">Verify</button></div>
    </form>
  </div>${sign_out}`;
  return { body: page("Second factor", shell, body), script: options !== null };
}

function signInStepPages(area: Area): ConsolePages {
  return (scope, ctx, failures: SignInFailures) => {
    const home = AREA_HOME[area];
    /** Only a session that owes a second factor is here; others go where they belong. */
    const person = async (request: FastifyRequest, reply: FastifyReply): Promise<Ctx | null> => {
      const session = sessionOf(request);
      if (session.stage !== "second_factor") {
        seeOther(reply, session.stage === "signed_in" ? home : `${home}/account/two-factor`);
        return null;
      }
      return personOf(request, ctx, area);
    };
    const show = async (c: Ctx, reply: FastifyReply, status: number, top: Html) => {
      const { body, script } = await secondFactorPage(c, top);
      return sendPage(reply, status, body, script);
    };
    const signedIn = async (c: Ctx, reply: FastifyReply, method: "totp" | "recovery_code" | "passkey") => {
      await completeSignIn(c.request, reply, ctx, method);
      return seeOther(reply, home);
    };
    /** A refused code or passkey: 401 (or 429 past the throttle) on the page, the same words for every cause. */
    const refused = async (c: Ctx, reply: FastifyReply, error: unknown) => {
      if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 429)) throw error;
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      return show(c, reply, error.status, notice("error", error.message));
    };

    scope.get("/sign-in/second-factor", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      return show(c, reply, 200, html``);
    });
    scope.post("/sign-in/second-factor", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      try {
        const method = await failures.attempt(request.ip, area, () =>
          checkSecondFactorCode(ctx.db, ctx.config, {
            user: c.user,
            code: formOf(request).code ?? "",
            ip: request.ip,
          }),
        );
        return await signedIn(c, reply, method);
      } catch (error) {
        return refused(c, reply, error);
      }
    });
    scope.post("/sign-in/second-factor/passkey", async (request, reply) => {
      const c = await person(request, reply);
      if (c === null) return reply;
      try {
        await failures.attempt(request.ip, area, () =>
          checkPasskey(ctx.db, {
            session_id: c.session.session_id,
            user: c.user,
            rp: relyingParty(request, ctx),
            response: formOf(request).response ?? "",
            ip: request.ip,
          }),
        );
        return await signedIn(c, reply, "passkey");
      } catch (error) {
        return refused(c, reply, error);
      }
    });
  };
}

function twoFactorPages(area: Area): ConsolePages {
  const account = accountPages(area);
  const step = signInStepPages(area);
  return (scope, ctx, failures) => {
    account(scope, ctx, failures);
    step(scope, ctx, failures);
  };
}

export const partnerTwoFactorPages = twoFactorPages("partner");
export const operatorTwoFactorPages = twoFactorPages("operator");

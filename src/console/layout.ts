// The console's page shell: one stylesheet from this service, no script (but this service's own
// script files on the few pages that need one), a skip link, a nav that
// marks the current page, and sign-out as a POST form carrying the session's CSRF token.
import { type Html, html } from "./html.ts";

export type Area = "partner" | "operator";

export type Shell = {
  area: Area;
  /** The signed-in user's session: nav and sign-out; absent on the sign-in pages. */
  signed_in?: { csrf: string; who: string; sandbox: boolean };
  /** The nav entry to mark as the current page. */
  current?: string;
  /** This origin's script files the page loads (deferred; the page's CSP must allow 'self'). */
  scripts?: readonly string[];
};

const NAV: Record<Area, ReadonlyArray<readonly [string, string]>> = {
  partner: [
    ["/console", "Overview"],
    ["/console/orders", "Orders"],
    ["/console/esims", "eSIMs"],
    ["/console/wallet", "Wallet"],
    ["/console/keys", "API keys"],
    ["/console/webhooks", "Webhooks"],
    ["/console/account/two-factor", "Two-factor"],
  ],
  operator: [
    ["/console/admin", "Partners"],
    ["/console/admin/orders", "Pending orders"],
    ["/console/admin/catalog", "Catalog"],
    ["/console/admin/ledger", "Ledger audit"],
    ["/console/admin/account/two-factor", "Two-factor"],
  ],
};

function nav(shell: Shell): Html {
  if (!shell.signed_in) return html``;
  const sign_out = shell.area === "operator" ? "/console/admin/sign-out" : "/console/sign-out";
  return html`<nav aria-label="Console">
    <ul class="nav">${NAV[shell.area].map(
      ([href, label]) =>
        html`<li><a href="${href}"${shell.current === href ? html` aria-current="page"` : ""}>${label}</a></li>`,
    )}</ul>
  </nav>
  <form method="post" action="${sign_out}" class="sign-out">
    <input type="hidden" name="_csrf" value="${shell.signed_in.csrf}">
    <span class="who">${shell.signed_in.who}</span>
    <button type="submit" class="quiet">Sign out</button>
  </form>`;
}

export function page(title: string, shell: Shell, body: Html): string {
  const brand = shell.area === "operator" ? "eSIM console · operator" : "eSIM console";
  const sandbox = shell.signed_in?.sandbox ?? false;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · ${brand}</title>
<link rel="stylesheet" href="/console/assets/console.css">
${(shell.scripts ?? []).map((src) => html`<script src="${src}" defer></script>\n`)}</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">${brand}${sandbox ? html` <span class="badge">sandbox</span>` : ""}</span>
  ${nav(shell)}
</header>
<main id="main" tabindex="-1"${shell.signed_in ? "" : html` class="narrow"`}>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`.text;
}

/** A message above a page's content: `status` is read by screen readers at once. */
export function notice(kind: "ok" | "error", text: Html | string): Html {
  return html`<div class="notice ${kind}" role="${kind === "error" ? "alert" : "status"}">${text}</div>`;
}

/** A table that scrolls sideways on a phone rather than squeezing its columns; keyboard reachable. */
export function scrollTable(label: string, table: Html): Html {
  return html`<div class="table-wrap" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

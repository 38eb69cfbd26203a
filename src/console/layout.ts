// The console's page shell: one stylesheet from this service, no script (but this service's own
// script files on the few pages that need one), a skip link, a nav that
// marks the current page, and sign-out as a POST form carrying the session's CSRF token.
import { can, type OperatorPermission, type PartnerPermission } from "../people/roles.ts";
import { Html, html } from "./html.ts";
import { withoutForbiddenForms } from "./permissions.ts";

export type Area = "partner" | "operator";

export type Shell = {
  area: Area;
  /** The signed-in user's session: nav and sign-out; absent on the sign-in pages. */
  signed_in?: { csrf: string; who: string; sandbox: boolean; role: string };
  /** The nav entry to mark as the current page. */
  current?: string;
  /** This origin's script files the page loads (deferred; the page's CSP must allow 'self'). */
  scripts?: readonly string[];
  /** The partner is suspended (issue 32): every page says so, and why, above its content. */
  suspended?: { reason: string; since: Date };
};

function suspendedBanner(shell: Shell): Html | string {
  if (!shell.suspended) return "";
  return html`<div class="notice error" role="alert" data-testid="suspended-banner"><strong>Your account is suspended
    by the operator</strong> since ${shell.suspended.since.toISOString().slice(0, 16).replace("T", " ")} UTC:
    ${shell.suspended.reason}. You can look at everything, but nothing can be changed (orders, keys, webhooks,
    the team) until the operator reactivates it, but for revoking keys, disabling people and deleting webhook
    endpoints; your own sign-in settings still work.</div>`;
}

/** Each entry with the permission its page takes (permissions.ts): a role sees only what it may open. */
const NAV: Record<
  Area,
  ReadonlyArray<readonly [string, string, PartnerPermission | OperatorPermission | "signed_in"]>
> = {
  partner: [
    ["/console", "Overview", "orders.read"],
    ["/console/orders", "Orders", "orders.read"],
    ["/console/esims", "eSIMs", "orders.read"],
    ["/console/wallet", "Wallet", "wallet.read"],
    ["/console/keys", "API keys", "api_keys.read"],
    ["/console/webhooks", "Webhooks", "webhooks.read"],
    ["/console/team", "Team", "team.read"],
    ["/console/audit-log", "Audit log", "audit.read"],
    ["/console/account/two-factor", "Two-factor", "signed_in"],
  ],
  operator: [
    ["/console/admin", "Partners", "partners.read"],
    ["/console/admin/orders", "Pending orders", "partners.read"],
    ["/console/admin/catalog", "Catalog", "catalog.write"],
    ["/console/admin/ledger", "Ledger audit", "money.read"],
    ["/console/admin/people", "People", "partners.read"],
    ["/console/admin/audit-log", "Audit log", "audit.read"],
    ["/console/admin/account/two-factor", "Two-factor", "signed_in"],
  ],
};

function nav(shell: Shell): Html {
  if (!shell.signed_in) return html``;
  const sign_out = shell.area === "operator" ? "/console/admin/sign-out" : "/console/sign-out";
  const role = shell.signed_in.role;
  return html`<nav aria-label="Console">
    <ul class="nav">${NAV[shell.area]
      .filter(([, , permission]) => permission === "signed_in" || can(shell.area, role, permission))
      .map(
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

export function page(title: string, shell: Shell, content: Html): string {
  // Forms the role may not use are left out of the page (permissions.ts refuses them anyway).
  const body = shell.signed_in
    ? new Html(withoutForbiddenForms(shell.area, shell.signed_in.role, content.text))
    : content;
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
${suspendedBanner(shell)}<h1>${title}</h1>
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

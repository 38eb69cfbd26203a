// What each console page and form needs (issue 31): one row per route, method and path as the
// route is registered, naming the permission of people/roles.ts it takes. The areas' scopes refuse
// to register a route without a row (so a page cannot be added without deciding who may use it),
// and check the row on every request, after the session and before the body is read: a role
// without the permission gets the 403 refusal page and nothing runs.
import type { FastifyRequest } from "fastify";
import { can, type OperatorPermission, type PartnerPermission, type Realm } from "../people/roles.ts";

/** `signed_in`: any person of the area with a finished sign-in (their own account, signing out). */
export type PagePermission<P> = P | "signed_in";

const PARTNER_ROUTES: Record<string, PagePermission<PartnerPermission>> = {
  "GET /console": "orders.read",
  "GET /console/": "orders.read",
  "GET /console/orders": "orders.read",
  "GET /console/orders/:order_id": "orders.read",
  "POST /console/orders/:order_id/resend-email": "orders.write",
  "POST /console/orders/:order_id/refund": "orders.write",
  "GET /console/esims": "orders.read",
  "GET /console/esims/:iccid": "orders.read",
  "GET /console/esims/:iccid/qr.png": "orders.read",
  "POST /console/esims/:iccid/simulate": "orders.write",
  "POST /console/esims/:iccid/top-up": "orders.write",
  "GET /console/wallet": "wallet.read",
  "GET /console/wallet/statement.csv": "statements.read",
  "GET /console/wallet/monthly": "statements.read",
  "GET /console/wallet/statement.pdf": "statements.read",
  "GET /console/keys": "api_keys.read",
  "POST /console/keys": "api_keys.write",
  "POST /console/keys/:key_id/revoke": "api_keys.write",
  "GET /console/webhooks": "webhooks.read",
  "POST /console/webhooks": "webhooks.write",
  "GET /console/webhooks/:endpoint_id": "webhooks.read",
  "POST /console/webhooks/:endpoint_id/test": "webhooks.write",
  "POST /console/webhooks/:endpoint_id/rotate-secret": "webhooks.write",
  "POST /console/webhooks/:endpoint_id/status": "webhooks.write",
  "POST /console/webhooks/:endpoint_id/delete": "webhooks.write",
  "POST /console/webhooks/:endpoint_id/deliveries/:delivery_id/retry": "webhooks.write",
  "GET /console/team": "team.read",
  "POST /console/team/invitations": "team.write",
  "POST /console/team/:user_id/role": "team.write",
  "POST /console/team/:user_id/status": "team.write",
  "POST /console/team/two-factor": "security.write",
  "GET /console/team/sso": "security.write",
  "POST /console/team/sso": "security.write",
  "POST /console/team/sso/remove": "security.write",
  "GET /console/audit-log": "audit.read",
  "POST /console/sign-out": "signed_in",
};

const OPERATOR_ROUTES: Record<string, PagePermission<OperatorPermission>> = {
  "GET /console/admin": "partners.read",
  "GET /console/admin/": "partners.read",
  "POST /console/admin/partners": "partners.write",
  "GET /console/admin/partners/:partner_id": "partners.read",
  "POST /console/admin/partners/:partner_id/name": "partners.write",
  "POST /console/admin/partners/:partner_id/status": "partners.write",
  "POST /console/admin/partners/:partner_id/keys": "partners.write",
  "POST /console/admin/partners/:partner_id/keys/:key_id/revoke": "partners.write",
  "POST /console/admin/partners/:partner_id/credits": "money.write",
  "POST /console/admin/partners/:partner_id/pricing": "money.write",
  "GET /console/admin/partners/:partner_id/money": "money.read",
  "POST /console/admin/partners/:partner_id/adjustments": "money.write",
  "GET /console/admin/partners/:partner_id/statement.pdf": "money.read",
  "POST /console/admin/partners/:partner_id/users": "people.write",
  "GET /console/admin/partners/:partner_id/orders": "partners.read",
  "GET /console/admin/orders": "partners.read",
  "GET /console/admin/orders/:order_id": "partners.read",
  "POST /console/admin/orders/:order_id/settle": "orders.write",
  "POST /console/admin/orders/:order_id/refund": "orders.write",
  "GET /console/admin/catalog": "catalog.write",
  "POST /console/admin/catalog": "catalog.write",
  "POST /console/admin/catalog/sync": "catalog.write",
  "GET /console/admin/ledger": "money.read",
  "GET /console/admin/people": "partners.read",
  "POST /console/admin/people/invitations": "people.write",
  "POST /console/admin/people/:user_id/role": "people.write",
  "POST /console/admin/people/:user_id/status": "people.write",
  "GET /console/admin/audit-log": "audit.read",
  "POST /console/admin/sign-out": "signed_in",
};

const ROUTES: Record<Realm, Record<string, PagePermission<PartnerPermission | OperatorPermission>>> = {
  partner: PARTNER_ROUTES,
  operator: OPERATOR_ROUTES,
};

/**
 * Pages that finish signing in or look after one's own account (a second factor, its enrolment):
 * every person may use their own, whatever their role.
 */
const OWN_ACCOUNT_PREFIXES = ["/sign-in/", "/account/"];

function key(method: string, url: string): string {
  return `${method === "HEAD" ? "GET" : method} ${url}`;
}

/** The permission a route takes, or undefined when the table has no row for it. */
export function routePermission(
  area: Realm,
  method: string,
  url: string,
): PagePermission<PartnerPermission | OperatorPermission> | undefined {
  const row = ROUTES[area][key(method, url)];
  if (row) return row;
  const home = area === "operator" ? "/console/admin" : "/console";
  if (OWN_ACCOUNT_PREFIXES.some((prefix) => url.startsWith(`${home}${prefix}`))) return "signed_in";
  return undefined;
}

/** Every (method, path) the table names, for tests that walk the whole matrix. */
export function permissionRows(area: Realm): Array<{ method: string; url: string; permission: string }> {
  return Object.entries(ROUTES[area]).map(([k, permission]) => {
    const [method, url] = k.split(" ") as [string, string];
    return { method, url, permission };
  });
}

/** Called as each route of an area registers: a route the table does not name is a startup error. */
export function assertRouteHasPermission(area: Realm, method: string | string[], url: string): void {
  for (const m of Array.isArray(method) ? method : [method]) {
    if (routePermission(area, m, url) === undefined) {
      throw new Error(
        `console route ${m} ${url} has no permission: add its row to src/console/permissions.ts`,
      );
    }
  }
}

/** Whether this session's role may use the route the request matched. */
export function mayUseRoute(area: Realm, role: string, request: FastifyRequest): boolean {
  const url = request.routeOptions.url;
  if (url === undefined) return true; // no route matched: the 404 page follows
  const permission = routePermission(area, request.method, url);
  if (permission === undefined) return false;
  return permission === "signed_in" || can(area, role, permission);
}

function patternOf(url: string): RegExp {
  const escaped = url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

const POST_PATTERNS: Record<Realm, Array<{ pattern: RegExp; url: string }>> = {
  partner: permissionRows("partner")
    .filter((row) => row.method === "POST")
    .map((row) => ({ pattern: patternOf(row.url), url: row.url })),
  operator: permissionRows("operator")
    .filter((row) => row.method === "POST")
    .map((row) => ({ pattern: patternOf(row.url), url: row.url })),
};

/** Whether a form posting to `path` (a concrete path, e.g. /console/keys/key_…/revoke) is one this role may use. */
export function mayPost(area: Realm, role: string, path: string): boolean {
  const bare = path.split("?")[0]!;
  const row = POST_PATTERNS[area].find((p) => p.pattern.test(bare));
  if (!row) return routePermission(area, "POST", bare) === "signed_in";
  const permission = routePermission(area, "POST", row.url)!;
  return permission === "signed_in" || can(area, role, permission);
}

/** A POST form, with the heading right before it (its title: "Add an endpoint"), if any. */
const POST_FORM = /(?:<h2>[^<]*<\/h2>\s*)?<form method="post" action="([^"]*)"[^>]*>[\s\S]*?<\/form>/g;

/**
 * A page's body without the forms this role may not use: the one place that hides them, from the
 * same table that refuses them, so a page never offers a button that would answer 403.
 */
export function withoutForbiddenForms(area: Realm, role: string, body: string): string {
  return body.replace(POST_FORM, (form, action: string) =>
    mayPost(area, role, action.replaceAll("&amp;", "&")) ? form : "",
  );
}

// Who may do what (issue 31): the one rule set for people. Every console page and form, and every
// route a person's session reaches, asks `can(realm, role, permission)`; nothing else decides.
// A permission names a thing and whether it is read or changed; a role is the set it holds. The
// table is tested as a matrix (test/people.roles.test.ts and the console's role browser test).

export type Realm = "partner" | "operator";

export const PARTNER_ROLES = ["owner", "admin", "developer", "support", "finance", "viewer"] as const;
export const OPERATOR_ROLES = ["admin", "finance", "support", "viewer"] as const;
export type PartnerRole = (typeof PARTNER_ROLES)[number];
export type OperatorRole = (typeof OPERATOR_ROLES)[number];
export type Role = PartnerRole | OperatorRole;

export const PARTNER_PERMISSIONS = [
  "orders.read", // orders, eSIMs, their timelines and emails
  "orders.write", // top-ups, refunds, resends
  "wallet.read", // the balance and the wallet page
  "wallet.write", // the low-balance alert
  "statements.read", // transactions, CSV and monthly statements
  "api_keys.read", // keys by name and hint, never secrets
  "api_keys.write", // issue and revoke
  "webhooks.read",
  "webhooks.write",
  "team.read",
  "team.write", // invite, change roles, disable: people other than owners
  "team.owners", // make, change or disable an owner
  "security.write", // require a second factor, single sign-on
  "audit.read",
  "profile.write", // branding and notification settings
] as const;
export type PartnerPermission = (typeof PARTNER_PERMISSIONS)[number];

export const OPERATOR_PERMISSIONS = [
  "partners.read", // partners, their orders, eSIMs, keys and users
  "partners.write", // create, rename, suspend and reactivate partners; issue and revoke their keys
  "money.read", // balances, statements, the ledger
  "money.write", // credits, adjustments, prices
  "orders.write", // refunds, resends, settling pending orders
  "catalog.write",
  "people.write", // invite partner and operator users, change roles, disable
  "audit.read",
] as const;
export type OperatorPermission = (typeof OPERATOR_PERMISSIONS)[number];

const ALL_PARTNER_READS: PartnerPermission[] = [
  "orders.read",
  "wallet.read",
  "statements.read",
  "api_keys.read",
  "webhooks.read",
  "team.read",
  "audit.read",
];

/** owner: everything; admin: everything but owners; developer: keys, webhooks, read everything; … */
const PARTNER_TABLE: Record<PartnerRole, ReadonlySet<PartnerPermission>> = {
  owner: new Set(PARTNER_PERMISSIONS),
  admin: new Set(PARTNER_PERMISSIONS.filter((p) => p !== "team.owners" && p !== "security.write")),
  developer: new Set([...ALL_PARTNER_READS, "api_keys.write", "webhooks.write"]),
  support: new Set(["orders.read", "orders.write", "wallet.read", "team.read"]),
  finance: new Set(["orders.read", "wallet.read", "wallet.write", "statements.read", "team.read"]),
  viewer: new Set(ALL_PARTNER_READS),
};

const OPERATOR_TABLE: Record<OperatorRole, ReadonlySet<OperatorPermission>> = {
  admin: new Set(OPERATOR_PERMISSIONS),
  finance: new Set(["partners.read", "money.read", "money.write", "audit.read"]),
  support: new Set(["partners.read", "orders.write", "audit.read"]),
  viewer: new Set(["partners.read", "money.read", "audit.read"]),
};

export function isPartnerRole(role: string): role is PartnerRole {
  return (PARTNER_ROLES as readonly string[]).includes(role);
}

export function isOperatorRole(role: string): role is OperatorRole {
  return (OPERATOR_ROLES as readonly string[]).includes(role);
}

export function isRole(realm: Realm, role: string): role is Role {
  return realm === "partner" ? isPartnerRole(role) : isOperatorRole(role);
}

/** Whether a person of this realm and role holds the permission; an unknown role holds nothing. */
export function can(realm: Realm, role: string, permission: PartnerPermission | OperatorPermission): boolean {
  if (realm === "partner") {
    return isPartnerRole(role) && PARTNER_TABLE[role].has(permission as PartnerPermission);
  }
  return isOperatorRole(role) && OPERATOR_TABLE[role].has(permission as OperatorPermission);
}

// A partner owner sets up single sign-on (issue 31): the OpenID provider's issuer, the client the
// partner registered there, and the email domains the provider vouches for. Checked before it is
// kept: the issuer is an https URL on a public address whose discovery document answers and names
// that issuer (SSO_ALLOW_PRIVATE_NETWORKS lifts the address rule, in the sandbox); each domain is a
// lower-case DNS name held by no other partner (a domain names one team, or a new person's team
// could not be told). The client secret is sealed (lib/secret-box.ts) and never shown again.
import { recordAudit } from "../audit/record-audit.ts";
import type { Config } from "../config.ts";
import type { Executor } from "../db/executor.ts";
import { type SealingBox, sealingBox } from "../lib/secret-box.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import {
  deleteConnection,
  replaceDomains,
  selectConnection,
  selectProvenTeamDomains,
  upsertConnection,
} from "./sso.sql.ts";
import { discoverProvider, issuerProblem } from "./sso-provider.ts";

export const MAX_SSO_DOMAINS = 20;
const MAX_CLIENT_ID_LENGTH = 255;
const MAX_CLIENT_SECRET_LENGTH = 500;
/** A DNS name of two labels or more, lower case: letters, digits and inner hyphens. */
const DOMAIN = /^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** What the settings page shows: never the secret. */
export type SsoSettings = { issuer: string; client_id: string; domains: string[]; updated_at: Date };

export type SsoSettingsInput = {
  issuer: string;
  client_id: string;
  /** Absent: keep the secret already set (an update that leaves the field blank). */
  client_secret: string | null;
  /** As typed: separated by commas, spaces or lines. */
  domains: string;
};

/** A refused setting: 422 with the field at fault, or 409 when another partner holds a domain. */
export type SsoSettingsRefusal = { status: 409 | 422; field: string; message: string };

export function ssoSecrets(config: Pick<Config, "webhook_secret_key">): SealingBox {
  // main.ts makes one in the sandbox and config.ts requires one in production.
  if (config.webhook_secret_key === null) throw new Error("WEBHOOK_SECRET_KEY is not set");
  return sealingBox(config.webhook_secret_key, "sso-client-secrets-v1");
}

export async function readSsoSettings(db: Executor, partner_id: string): Promise<SsoSettings | null> {
  const row = await selectConnection(db, partner_id);
  return (
    row && { issuer: row.issuer, client_id: row.client_id, domains: row.domains, updated_at: row.updated_at }
  );
}

/** The domains as typed, lower-cased and deduplicated, or why they are refused. */
export function parseDomains(raw: string): string[] | SsoSettingsRefusal {
  const domains = [
    ...new Set(
      raw
        .split(/[\s,]+/)
        .filter((d) => d !== "")
        .map((d) => d.toLowerCase().replace(/\.$/, "")),
    ),
  ];
  const refuse = (message: string): SsoSettingsRefusal => ({ status: 422, field: "domains", message });
  if (domains.length === 0) return refuse("Name at least one email domain.");
  if (domains.length > MAX_SSO_DOMAINS) return refuse(`At most ${MAX_SSO_DOMAINS} domains.`);
  const bad = domains.find((d) => !DOMAIN.test(d));
  if (bad !== undefined) return refuse(`"${bad.slice(0, 80)}" is not a domain name such as example.com.`);
  return domains;
}

/**
 * Mailbox providers whose addresses belong to anyone: no team may vouch for them (every person of
 * the domain would join that team through its provider).
 */
const SHARED_MAIL_DOMAINS = new Set([
  "gmail.com",
  "googlemail.com",
  "outlook.com",
  "hotmail.com",
  "live.com",
  "msn.com",
  "yahoo.com",
  "ymail.com",
  "icloud.com",
  "me.com",
  "mac.com",
  "aol.com",
  "proton.me",
  "protonmail.com",
  "gmx.com",
  "gmx.de",
  "gmx.net",
  "web.de",
  "mail.com",
  "yandex.com",
  "yandex.ru",
  "qq.com",
  "163.com",
  "zoho.com",
  "fastmail.com",
  "hey.com",
  "mail.ru",
  "orange.fr",
  "free.fr",
  "t-online.de",
  "libero.it",
]);

/**
 * Why the team may not vouch for one of these domains, or null. A team vouches only for the domains
 * (and their subdomains) of its own active people who proved they read mail there: an owner cannot
 * claim another company's domain (sending that company's people to their provider, or holding the
 * domain against its rightful team), and a refusal here says nothing of other teams.
 */
async function domainProblem(db: Executor, partner_id: string, domains: string[]): Promise<string | null> {
  const shared = domains.find((d) => SHARED_MAIL_DOMAINS.has(d));
  if (shared) return `${shared} is a mailbox provider's domain: anyone can have an address there.`;
  const proven = await selectProvenTeamDomains(db, partner_id);
  const unproven = domains.find((d) => !proven.some((p) => d === p || d.endsWith(`.${p}`)));
  if (unproven === undefined) return null;
  return `No active person of this team has an address at ${unproven}: invite someone with one (accepting the invitation proves the address), then vouch for the domain.`;
}

function refuse(field: string, message: string): SsoSettingsRefusal {
  return { status: 422, field, message };
}

/**
 * Checks and keeps the partner's SSO settings, audited as `team.sso_updated` in the same
 * transaction; a refusal changes nothing.
 */
export async function saveSsoSettings(
  ctx: Pick<AppContext, "db" | "config">,
  actor: Actor,
  partner_id: string,
  input: SsoSettingsInput,
): Promise<SsoSettingsRefusal | null> {
  const allow_private = ctx.config.sso_allow_private_networks;
  // As typed: the discovery document must name exactly this issuer (a trailing slash included).
  const issuer = input.issuer.trim();
  const issuer_problem = issuerProblem(issuer, allow_private);
  if (issuer_problem !== null) return refuse("issuer", issuer_problem);
  const client_id = input.client_id.trim();
  if (client_id === "" || client_id.length > MAX_CLIENT_ID_LENGTH || !/^[\x21-\x7e]+$/.test(client_id))
    return refuse(
      "client_id",
      `The client ID is 1 to ${MAX_CLIENT_ID_LENGTH} printable characters without spaces.`,
    );
  const domains = parseDomains(input.domains);
  if (!Array.isArray(domains)) return domains;
  const domain_problem = await domainProblem(ctx.db, partner_id, domains);
  if (domain_problem !== null) return refuse("domains", domain_problem);
  const box = ssoSecrets(ctx.config);
  const current = await selectConnection(ctx.db, partner_id);
  let client_secret = input.client_secret;
  if (client_secret === null && current !== null)
    client_secret = box.open(partner_id, current.client_secret_sealed);
  if (client_secret === null || client_secret === "" || client_secret.length > MAX_CLIENT_SECRET_LENGTH)
    return refuse("client_secret", `The client secret is 1 to ${MAX_CLIENT_SECRET_LENGTH} characters.`);
  try {
    await discoverProvider({ issuer, client_id, client_secret }, allow_private);
  } catch (error) {
    return refuse("issuer", `The issuer's discovery document could not be read: ${reasonOf(error)}`);
  }
  return ctx.db
    .transaction()
    .execute(async (tx) => {
      await upsertConnection(tx, {
        partner_id,
        issuer,
        client_id,
        client_secret_sealed: box.seal(partner_id, client_secret),
      });
      const held = await replaceDomains(tx, partner_id, domains);
      if (held.length > 0) {
        // Rolls the connection back with the domains: nothing is kept of a refused setting.
        throw new DomainsHeld(held);
      }
      await recordAudit(tx, {
        actor,
        action: "team.sso_updated",
        partner_id,
        target: { type: "sso_connection", id: partner_id },
        details: {
          issuer,
          client_id,
          domains,
          previous: current && {
            issuer: current.issuer,
            client_id: current.client_id,
            domains: current.domains,
          },
          secret_changed: input.client_secret !== null,
        },
      });
      return null;
    })
    .catch((error: unknown) => {
      if (!(error instanceof DomainsHeld)) throw error;
      const names = error.domains.join(", ");
      return {
        status: 409 as const,
        field: "domains",
        message: `Another partner's single sign-on already vouches for ${names}.`,
      };
    });
}

/** The innermost cause's message: openid-client wraps a refused address in "something went wrong". */
function reasonOf(error: unknown): string {
  let reason = error instanceof Error ? error.message : String(error);
  for (
    let cause = (error as Error)?.cause, depth = 0;
    cause instanceof Error && depth < 5;
    cause = cause.cause, depth++
  )
    reason = cause.message;
  return reason.slice(0, 300);
}

class DomainsHeld extends Error {
  readonly domains: string[];
  constructor(domains: string[]) {
    super(`domains held by another partner: ${domains.join(", ")}`);
    this.domains = domains;
  }
}

/** Turns single sign-on off for the partner: its people sign in with passwords again. */
export async function removeSsoSettings(
  ctx: Pick<AppContext, "db">,
  actor: Actor,
  partner_id: string,
): Promise<boolean> {
  return ctx.db.transaction().execute(async (tx) => {
    const current = await selectConnection(tx, partner_id);
    if (current === null || !(await deleteConnection(tx, partner_id))) return false;
    await recordAudit(tx, {
      actor,
      action: "team.sso_updated",
      partner_id,
      target: { type: "sso_connection", id: partner_id },
      details: {
        removed: true,
        previous: { issuer: current.issuer, client_id: current.client_id, domains: current.domains },
      },
    });
    return true;
  });
}

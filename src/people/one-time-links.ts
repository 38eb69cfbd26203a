// One-time links (issue 31): 32 random bytes, base64url, in the link only; the database keeps their
// SHA-256 (user_tokens), so a copy of the database opens nobody's account.
import { createHash, randomBytes } from "node:crypto";
import type { Realm } from "./roles.ts";

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function newLinkToken(): { token: string; token_hash: Buffer } {
  const token = randomBytes(32).toString("base64url");
  return { token, token_hash: linkTokenHash(token) };
}

export function linkTokenHash(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** Whether a path segment can be one of our tokens (anything else is refused before a query). */
export function isLinkToken(token: string): boolean {
  return TOKEN.test(token);
}

const PATHS = {
  invitation: { partner: "/console/invitations", operator: "/console/admin/invitations" },
  password_reset: { partner: "/console/password-reset", operator: "/console/admin/password-reset" },
} as const;

export function linkUrl(
  base_url: string,
  kind: "invitation" | "password_reset",
  realm: Realm,
  token: string,
): string {
  return `${base_url}${PATHS[kind][realm]}/${token}`;
}

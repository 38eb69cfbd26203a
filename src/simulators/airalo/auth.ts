// OAuth2 client credentials, as POST /v2/token documents them [DOC:request-access-token-11883021e0]:
// one configured client_id/client_secret pair, and bearer tokens checked on every other call.
// Tokens are self-contained (HMAC-signed issue time), so they survive a restart of the fake, as a
// real token survives a restart of Airalo's servers. Lifetime: the docs' `expires_in` is 31622400 s
// (a year) while the text says 24 hours (UNCONFIRMED which); configurable, a year by default.
import { createHmac, timingSafeEqual } from "node:crypto";

export type Credentials = { client_id: string; client_secret: string; token_ttl_s: number };

export const DEFAULT_TOKEN_TTL_S = 31_622_400;

function sign(secret: string, payload: string): string {
  return createHmac("sha256", `airalo-sim-token:${secret}`).update(payload).digest("base64url");
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function credentialsMatch(
  credentials: Credentials,
  client_id: string,
  client_secret: string,
): boolean {
  // Both compared, always, so the time taken does not say which one was wrong.
  const id = same(client_id, credentials.client_id);
  const secret = same(client_secret, credentials.client_secret);
  return id && secret;
}

export function issueToken(credentials: Credentials, now_ms = Date.now()): string {
  const payload = Buffer.from(
    JSON.stringify({ cid: credentials.client_id, iat: Math.floor(now_ms / 1000) }),
  ).toString("base64url");
  return `${payload}.${sign(credentials.client_secret, payload)}`;
}

/** True for a token this fake issued with these credentials, not yet expired. */
export function tokenValid(credentials: Credentials, token: string, now_ms = Date.now()): boolean {
  const [payload, signature, extra] = token.split(".");
  if (!payload || !signature || extra !== undefined || token.length > 500) return false;
  if (!same(signature, sign(credentials.client_secret, payload))) return false;
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as { cid: string; iat: number };
  return claims.cid === credentials.client_id && claims.iat + credentials.token_ttl_s > now_ms / 1000;
}

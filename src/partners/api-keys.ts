// API key format and hashing. A key is `sand_` or `prod_` followed by 43 URL-safe characters
// (32 random bytes). Only its SHA-256 is stored: a leaked database does not leak usable keys,
// and a lookup by hash through a unique index takes the same time whatever the key is.
import { createHash, hash, randomBytes } from "node:crypto";
import type { AppEnv } from "../config.ts";

export const KEY_PREFIXES: Record<AppEnv, string> = { sandbox: "sand_", production: "prod_" };
const KEY_BODY = /^[A-Za-z0-9_-]{32,128}$/;
const HINT_LENGTH = 9;

export type IssuedKey = { api_key: string; key_hash: Buffer; key_hint: string };

export function generateApiKey(env: AppEnv): IssuedKey {
  const api_key = KEY_PREFIXES[env] + randomBytes(32).toString("base64url");
  return { api_key, key_hash: hashApiKey(api_key), key_hint: api_key.slice(0, HINT_LENGTH) };
}

export function hashApiKey(api_key: string): Buffer {
  return createHash("sha256").update(api_key, "utf8").digest();
}

/** The same SHA-256 as `hashApiKey`, base64url: the auth cache's key, by the cheaper one-shot hash. */
export function apiKeySlot(api_key: string): string {
  return hash("sha256", api_key, "base64url");
}

/** The environment a well-formed key belongs to, or null for anything that is not a key of ours. */
export function keyEnvironment(api_key: string): AppEnv | null {
  for (const env of ["sandbox", "production"] as const) {
    const prefix = KEY_PREFIXES[env];
    if (api_key.startsWith(prefix) && KEY_BODY.test(api_key.slice(prefix.length))) return env;
  }
  return null;
}

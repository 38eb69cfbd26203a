// Webhook signing secrets at rest: sealed by the shared box (shared/secret-box.ts, AES-256-GCM) under
// a key derived from WEBHOOK_SECRET_KEY, with the endpoint id as associated data (a sealed secret
// copied onto another endpoint's row does not open), written as text `v1:<base64>`.
// The plain secret exists only in the create and rotate answers and in memory while signing; it is
// never logged. The sandbox keeps a generated key in DATA_DIR (loadOrCreateSecretKey).
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { sealingBox } from "../shared/secret-box.ts";

const VERSION = "v1";

export type SecretBox = {
  seal(endpoint_id: string, secret: string): string;
  open(endpoint_id: string, sealed: string): string;
};

/** `key_base64`: base64 of at least 32 random bytes (config.ts checked it). Sealed as `v1:<base64>`. */
export function secretBox(key_base64: string): SecretBox {
  if (Buffer.from(key_base64, "base64").length < 32)
    throw new Error("WEBHOOK_SECRET_KEY must hold at least 32 bytes");
  const box = sealingBox(key_base64, "webhook-secrets-v1");
  return {
    seal(endpoint_id, secret) {
      return `${VERSION}:${box.seal(endpoint_id, secret).toString("base64")}`;
    },
    open(endpoint_id, sealed) {
      const [version, body] = sealed.split(":");
      if (version !== VERSION || body === undefined) throw new Error("unknown sealed secret format");
      return box.open(endpoint_id, Buffer.from(body, "base64"));
    },
  };
}

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The sandbox's key when WEBHOOK_SECRET_KEY is not set: read from `<data_dir>/webhook-secret-key`,
 * or made there once (exclusive create, so two processes starting together agree on one key).
 */
export async function loadOrCreateSecretKey(data_dir: string): Promise<string> {
  const file = path.join(data_dir, "webhook-secret-key");
  await mkdir(data_dir, { recursive: true });
  try {
    await writeFile(file, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return (await readFile(file, "utf8")).trim();
}

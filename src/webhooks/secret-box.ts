// Webhook signing secrets at rest: AES-256-GCM under a key derived from WEBHOOK_SECRET_KEY, with the
// endpoint id as associated data (a sealed secret copied onto another endpoint's row does not open).
// The plain secret exists only in the create and rotate answers and in memory while signing; it is
// never logged. The sandbox keeps a generated key in DATA_DIR (loadOrCreateSecretKey).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type SecretBox = {
  seal(endpoint_id: string, secret: string): string;
  open(endpoint_id: string, sealed: string): string;
};

/** `key_base64`: base64 of at least 32 random bytes (config.ts checked it). */
export function secretBox(key_base64: string): SecretBox {
  const material = Buffer.from(key_base64, "base64");
  if (material.length < 32) throw new Error("WEBHOOK_SECRET_KEY must hold at least 32 bytes");
  const key = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), "webhook-secrets-v1", 32));
  return {
    seal(endpoint_id, secret) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(endpoint_id));
      const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
    },
    open(endpoint_id, sealed) {
      const [version, body] = sealed.split(":");
      if (version !== VERSION || body === undefined) throw new Error("unknown sealed secret format");
      const bytes = Buffer.from(body, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(endpoint_id));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
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

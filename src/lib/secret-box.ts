// Secrets at rest that the service must read back (webhook signing secrets, TOTP seeds): AES-256-GCM
// under a key derived from the service's key (WEBHOOK_SECRET_KEY) for one purpose (HKDF info: a
// webhook secret's box does not open a TOTP seed), with the owner's id as associated data (a sealed
// secret copied onto another row does not open). The sandbox keeps a generated key in DATA_DIR
// (loadOrCreateSecretKey).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** `owner_id`: the id of the row the secret belongs to (an endpoint, a person). */
export type SecretBox = {
  seal(owner_id: string, secret: string): string;
  open(owner_id: string, sealed: string): string;
};

/**
 * `key_base64`: base64 of at least 32 random bytes (config.ts checked it); `purpose`: the HKDF info
 * naming what this box seals (`webhook-secrets-v1`, `totp-seeds-v1`), one derived key per purpose.
 */
export function secretBox(key_base64: string, purpose: string): SecretBox {
  const material = Buffer.from(key_base64, "base64");
  if (material.length < 32) throw new Error("WEBHOOK_SECRET_KEY must hold at least 32 bytes");
  const key = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), purpose, 32));
  return {
    seal(owner_id, secret) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(owner_id));
      const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
    },
    open(owner_id, sealed) {
      const [version, body] = sealed.split(":");
      if (version !== VERSION || body === undefined) throw new Error("unknown sealed secret format");
      const bytes = Buffer.from(body, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(owner_id));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    },
  };
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

/** Seals and opens secrets of one purpose as bytes (a bytea column: an SSO client secret). */
export type SealingBox = {
  seal(context: string, secret: string): Buffer;
  open(context: string, sealed: Buffer): string;
};

/** secretBox's sealing, for a bytea column: the same `v1:` text, as its UTF-8 bytes. */
export function sealingBox(key_base64: string, purpose: string): SealingBox {
  const box = secretBox(key_base64, purpose);
  return {
    seal: (context, secret) => Buffer.from(box.seal(context, secret), "utf8"),
    open: (context, sealed) => box.open(context, sealed.toString("utf8")),
  };
}

// Secrets the service must read back (a webhook's signing secret, a TOTP seed, an SSO client
// secret), sealed at rest: AES-256-GCM under a key derived (HKDF) from the service's secret key for
// one `purpose`, with a `context` (the row's id) as associated data, so a sealed secret copied onto
// another row, or into another purpose's column, does not open. The plain secret lives only in
// memory while it is used; it is never logged.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals and opens secrets of one purpose; a sealed value is `iv | tag | ciphertext`. */
export type SealingBox = {
  seal(context: string, secret: string): Buffer;
  open(context: string, sealed: Buffer): string;
};

/** `key_base64`: base64 of at least 32 random bytes (config.ts checked it); `purpose`: the HKDF info. */
export function sealingBox(key_base64: string, purpose: string): SealingBox {
  const material = Buffer.from(key_base64, "base64");
  if (material.length < 32) throw new Error("the secret key must hold at least 32 bytes");
  const key = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), purpose, 32));
  return {
    seal(context, secret) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context));
      const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
    },
    open(context, sealed) {
      if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error("sealed secret too short");
      const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    },
  };
}

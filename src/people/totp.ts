// TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps) with the `otpauth` library, and the seed
// at rest: sealed with the service's key (lib/secret-box.ts, purpose `totp-seeds-v1`, the
// person's id as associated data), since verifying a code needs the seed itself, not a hash of it.
import { Secret, TOTP } from "otpauth";
import type { Config } from "../config.ts";
import { type SecretBox, secretBox } from "../lib/secret-box.ts";

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/** Codes of the step before and after now pass too: a phone's clock drifts, a person types slowly. */
export const TOTP_WINDOW_STEPS = 1;
/** 160 bits, the size RFC 4226 recommends for an HMAC-SHA-1 key. */
const SEED_BYTES = 20;
const ISSUER = "eSIM console";

const boxes = new Map<string, SecretBox>();

function boxOf(config: Pick<Config, "webhook_secret_key">): SecretBox {
  const key = config.webhook_secret_key;
  // main.ts sets one in the sandbox and config.ts requires one in production.
  if (key === null) throw new Error("WEBHOOK_SECRET_KEY is not set: TOTP seeds cannot be sealed");
  let box = boxes.get(key);
  if (box === undefined) {
    box = secretBox(key, "totp-seeds-v1");
    boxes.set(key, box);
  }
  return box;
}

export function sealSeed(config: Pick<Config, "webhook_secret_key">, user_id: string, seed: string): Buffer {
  return Buffer.from(boxOf(config).seal(user_id, seed), "utf8");
}

export function openSeed(
  config: Pick<Config, "webhook_secret_key">,
  user_id: string,
  sealed: Buffer,
): string {
  return boxOf(config).open(user_id, sealed.toString("utf8"));
}

/** A new seed, in base32 (what authenticator apps take typed in). */
export function newSeed(): string {
  return new Secret({ size: SEED_BYTES }).base32;
}

function totpOf(seed: string, label = ""): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_S,
    secret: Secret.fromBase32(seed),
  });
}

/** The otpauth:// URI an authenticator app reads from the QR code (Key Uri Format). */
export function otpauthUri(seed: string, email: string): string {
  return totpOf(seed, email).toString();
}

/** The seed grouped by four for typing by hand. */
export function groupedSeed(seed: string): string {
  return seed.replace(/(.{4})(?=.)/g, "$1 ");
}

/**
 * The time step whose code `code` is, within the window around `now_ms`, or null. Whether that step
 * may still be taken is the database's call (acceptTotpStep: never twice).
 */
export function matchingStep(seed: string, code: string, now_ms = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpOf(seed).validate({ token: code, timestamp: now_ms, window: TOTP_WINDOW_STEPS });
  if (delta === null) return null;
  return Math.floor(now_ms / 1000 / TOTP_PERIOD_S) + delta;
}

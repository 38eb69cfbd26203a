// Passwords (issue 31): at least 12 characters, not a commonly used one, stored with scrypt.
//
// scrypt from node:crypto is memory-hard; its cost is OWASP's Password Storage Cheat Sheet scrypt
// line "N=2^15, r=8, p=3" (32 MiB per hash). The stored form names its parameters
// (`scrypt$15$8$3$salt$hash`), so a later cost verifies old hashes and rehashes at the next sign-in.
//
// "Commonly used" is judged by zxcvbn-ts (a maintained port of Dropbox's zxcvbn) with its
// common-password dictionary (49k ranked passwords) and keyboard graphs: a password scoring under 3
// ("safely unguessable" begins at 3) is refused, which catches `password1234` and `qwertyuiop12`
// as well as the list itself. The person's own email and name count as guessable words.
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { zxcvbn, zxcvbnOptions } from "@zxcvbn-ts/core";
import * as common from "@zxcvbn-ts/language-common";
import { ApiError } from "../shared/errors.ts";

export const MIN_PASSWORD_LENGTH = 12;
/** Long enough for any passphrase, short enough that hashing it costs what any other does. */
export const MAX_PASSWORD_LENGTH = 200;

const LOG2_N = 15;
const R = 8;
const P = 3;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

/**
 * zxcvbn's l33t matcher grows faster than linearly with length (a 200-character password took 9 s
 * of the event loop): only this many characters are scored. A prefix that is hard to guess makes
 * the whole password hard to guess; a weak prefix of a long passphrase is still refused.
 */
const SCORED_PREFIX = 40;

/**
 * Hashes in flight per process, and waiting: scrypt runs on libuv's 4 shared threads (DNS, files,
 * async crypto wait behind it), and sign-in is open to anyone. Past the queue: 503 with Retry-After.
 */
const HASHES_IN_FLIGHT = 2;
const HASHES_WAITING = 64;
let inFlight = 0;
const waiting: Array<() => void> = [];

async function bounded<T>(work: () => Promise<T>): Promise<T> {
  if (inFlight >= HASHES_IN_FLIGHT) {
    if (waiting.length >= HASHES_WAITING) {
      throw new ApiError("service_unavailable", "Too many sign-ins at once; try again in a moment.", {
        headers: { "retry-after": "1" },
      });
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else inFlight++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  }
}

zxcvbnOptions.setOptions({ dictionary: { ...common.dictionary }, graphs: common.adjacencyGraphs });

function derive(password: string, salt: Buffer, log2_n: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** log2_n;
  // maxmem above 128 * N * r (the default, 32 MiB, is exactly that and refused as too small).
  const maxmem = 256 * N * r + 1024 * 1024;
  return bounded(
    () =>
      new Promise((resolve, reject) =>
        scrypt(password.normalize("NFC"), salt, KEY_LENGTH, { N, r, p, maxmem }, (error, key) =>
          error ? reject(error) : resolve(key),
        ),
      ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, LOG2_N, R, P);
  return `scrypt$${LOG2_N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/**
 * A hash to compare against when no user matched, so an unknown email costs what a known one does.
 * Made at start-up (warmDecoy), so the first unknown email does not cost two hashes.
 */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString("base64url"));
  return decoy;
}

export function warmDecoy(): void {
  void decoyHash().catch(() => {
    decoy = null;
  });
}

/** Whether the password matches the stored hash; false for any hash this code did not write. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [log2_n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![log2_n, r, p].every((n) => Number.isInteger(n) && n > 0 && n < 32)) return false;
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const salt = Buffer.from(parts[4]!, "base64url");
  const expected = Buffer.from(parts[5]!, "base64url");
  const key = await derive(password, salt, log2_n, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Why a new password is refused, in words for the person choosing it; null when it is acceptable. */
export function passwordProblem(given: string, personal: string[] = []): string | null {
  const password = given.normalize("NFC");
  if ([...password].length < MIN_PASSWORD_LENGTH)
    return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `Choose a password of at most ${MAX_PASSWORD_LENGTH} characters.`;
  const words = personal
    .flatMap((w) => w.toLowerCase().split(/[^\p{L}\p{N}]+/u))
    .filter((w) => w.length >= 3);
  const result = zxcvbn(password.slice(0, SCORED_PREFIX), words);
  if (result.score < 3)
    return "That password is commonly used or easy to guess. Choose a longer or less predictable one, such as a few unrelated words.";
  return null;
}

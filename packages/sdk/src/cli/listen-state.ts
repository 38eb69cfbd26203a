// Where `esim-partner listen` stopped, kept in a small JSON file (by default
// `.esim-partner-listen.json` in the directory it runs in) so a restart forwards what was recorded
// meanwhile and nothing twice. It holds the signing secret too, so the receiver's configured secret
// keeps working across restarts, and a fingerprint of the API key (never the key) and the base URL,
// so a file written for another partner or deployment is refused rather than misread.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { UsageError } from "./errors.ts";

/**
 * GET /v1/events is ordered by when an event was recorded, and a transaction may commit after a
 * later one: events recorded this long before the newest one forwarded are read again and sent if
 * they were not seen. Their ids are kept for that long.
 */
export const OVERLAP_MS = 60_000;
/** The ids kept to recognise events already forwarded (the overlap's worth, at most this many). */
export const MAX_SEEN = 2_000;

export type ListenState = {
  version: 1;
  base_url: string;
  key_fingerprint: string;
  secret: string;
  /** `created_at` of the newest event forwarded; null until the first one (and on a first start with no events). */
  high_water: string | null;
  /** Events forwarded (or present at the first start) within OVERLAP_MS of high_water. */
  seen: { id: string; created_at: string }[];
};

export function keyFingerprint(api_key: string): string {
  return createHash("sha256").update(api_key).digest("hex").slice(0, 16);
}

/** `whsec_` + base64 of 32 random bytes, as the API makes an endpoint's secret. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The state in `file`, or null when there is none; refuses a file of another deployment or key. */
export function readState(file: string, base_url: string, api_key: string): ListenState | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
  let state: ListenState;
  try {
    state = JSON.parse(text) as ListenState;
  } catch {
    throw new UsageError(`${file} is not JSON: delete it to start afresh`);
  }
  if (state.version !== 1 || typeof state.secret !== "string" || !Array.isArray(state.seen)) {
    throw new UsageError(`${file} is not a state file of this version: delete it to start afresh`);
  }
  if (state.base_url !== base_url || state.key_fingerprint !== keyFingerprint(api_key)) {
    throw new UsageError(
      `${file} was written for another base URL or API key (${state.base_url}): pass --state <another file>, or delete it`,
    );
  }
  return state;
}

/** Writes the whole state to a temporary file and renames it over `file`: never half a file. */
export function writeState(file: string, state: ListenState): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** Marks `event` forwarded: raises the high-water mark and forgets ids older than the overlap. */
export function markSeen(state: ListenState, event: { id: string; created_at: string }): void {
  if (state.high_water === null || event.created_at > state.high_water) state.high_water = event.created_at;
  state.seen.push({ id: event.id, created_at: event.created_at });
  const floor = Date.parse(state.high_water) - OVERLAP_MS;
  state.seen = state.seen.filter((seen) => Date.parse(seen.created_at) >= floor).slice(-MAX_SEEN);
}

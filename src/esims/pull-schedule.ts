// When the pull sync next asks the carrier about an eSIM that a signal (pushed or pulled) just
// brought up to date. Pure: apply-signal.ts writes the answer to `esims.next_sync_at`.
//
// - Expired, deleted and cancelled eSIMs are not pulled again (null): nothing more happens to them
//   on its own. A top-up makes one due again (sync-esims.ts pullSoon), and a pushed signal still
//   applies (a deleted profile, a revived one).
// - A released eSIM (never downloaded) is pulled less often as it ages: a tenth of its age apart,
//   at least USAGE_SYNC_MIN_INTERVAL_S and at most a day. An installation is a callback of the
//   SM-DP+ anyway; the pull is what catches a lost one, and most old released eSIMs are never used.
// - Every other eSIM is pulled USAGE_SYNC_MIN_INTERVAL_S apart.
// - Whatever the interval says, the next pull is no later than the two instants that time alone
//   makes facts of: the `esim.expiring` line (24 hours before `expires_at`) and `expires_at` itself
//   (`esim.expired`), each a moment after it so the merge finds it crossed. So the warning is not
//   up to an interval late. These two pulls per expiry may come sooner than the minimum interval;
//   they are bounded (a pull past both lines has none left to schedule).

import type { EsimStatus } from "../db/schema.ts";
import { EXPIRING_NOTICE_MS } from "./apply-signal-merge.ts";

/** A released eSIM is pulled this share of its age apart (within the bounds below). */
export const RELEASED_AGE_SHARE = 0.1;
/** The longest a released eSIM waits between pulls. */
export const MAX_RELEASED_INTERVAL_S = 86_400;
/**
 * How long after a time-driven line its pull runs: clocks of this process, the database and the
 * carrier may differ a little, and a pull a moment early would find nothing crossed.
 */
export const LINE_MARGIN_MS = 1_000;

const NOT_PULLED: ReadonlySet<EsimStatus> = new Set(["expired", "deleted", "cancelled"]);

/** null: not pulled again. Otherwise the interval's next pull and the next time-driven line, if any. */
export type PullSchedule = { regular_at: Date; line_at: Date | null } | null;

export function nextPull(
  esim: { status: EsimStatus; created_at: Date; expires_at: Date | null },
  now: Date,
  min_interval_s: number,
  /** 1 to 1.2 (apply-signal.ts withJitter): eSIMs bought together do not come due together. */
  jitter: number,
): PullSchedule {
  if (NOT_PULLED.has(esim.status)) return null;
  let interval_s = min_interval_s;
  if (esim.status === "released") {
    const age_s = Math.max(0, (now.getTime() - esim.created_at.getTime()) / 1000);
    interval_s = Math.max(min_interval_s, Math.min(age_s * RELEASED_AGE_SHARE, MAX_RELEASED_INTERVAL_S));
  }
  return {
    regular_at: new Date(now.getTime() + interval_s * jitter * 1000),
    line_at: nextLine(esim.expires_at, now),
  };
}

/** The first of the expiring line and the expiry that is still ahead, plus the margin; or null. */
function nextLine(expires_at: Date | null, now: Date): Date | null {
  if (expires_at === null) return null;
  const lines = [expires_at.getTime() - EXPIRING_NOTICE_MS, expires_at.getTime()];
  const ahead = lines.find((line) => line > now.getTime());
  return ahead === undefined ? null : new Date(ahead + LINE_MARGIN_MS);
}

/** When a pull should run: the interval's or the line's, whichever is first. */
export function pullAt(schedule: NonNullable<PullSchedule>): Date {
  const { regular_at, line_at } = schedule;
  return line_at !== null && line_at < regular_at ? line_at : regular_at;
}

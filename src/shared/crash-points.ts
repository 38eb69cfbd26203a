// Crash injection for the fault tests: with CRASH_AT=<point> (sandbox only, see config.ts) the
// process kills itself with SIGKILL when it reaches that point, as a power cut would. Tests
// and `npm run chaos` use it to prove that every point of a purchase survives a crash.
export const CRASH_POINTS = [
  "after_pending_commit",
  "after_carrier_answer",
  "after_completion_commit",
  // An eSIM signal (callback or pull) received and applied, its transaction not yet committed.
  "before_signal_commit",
  // ES2+ (issue 15): DownloadOrder answered, ConfirmOrder not sent yet.
  "after_download_order",
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

let armed: CrashPoint | null = null;

export function armCrashPoint(point: CrashPoint | null): void {
  armed = point;
}

export function crashPoint(point: CrashPoint): void {
  if (armed === point) process.kill(process.pid, "SIGKILL");
}

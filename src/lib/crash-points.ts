// Crash injection for the fault tests: with CRASH_AT=<point> (sandbox only, see config.ts) the
// process kills itself with SIGKILL when it reaches that point, as a power cut would. Tests
// and `npm run chaos` use it to prove that every point of a purchase survives a crash.
export const CRASH_POINTS = [
  "after_pending_commit",
  "after_carrier_answer",
  "after_completion_commit",
  // A group order (issue 34): its second line's answer recorded, its other calls in flight or not
  // yet made (drive-group.ts).
  "after_second_group_line",
  // An eSIM signal (callback or pull) received and applied, its transaction not yet committed.
  "before_signal_commit",
  // A refund (src/refunds/): its intent committed before the carrier is asked; the carrier's cancel
  // answered, nothing of ours committed; the refund committed, the answer not sent.
  "after_refund_intent_commit",
  "after_cancel_answer",
  "after_refund_commit",
  // ES2+ (issue 15): DownloadOrder answered, ConfirmOrder not sent yet.
  "after_download_order",
  // A price list replaced and its catalog changes recorded, the transaction not yet committed.
  "before_pricing_commit",
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

let armed: CrashPoint | null = null;

export function armCrashPoint(point: CrashPoint | null): void {
  armed = point;
}

export function crashPoint(point: CrashPoint): void {
  if (armed === point) process.kill(process.pid, "SIGKILL");
}

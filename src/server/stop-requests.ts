// Everything that asks this process to stop, and one answer to all of them: the caller's `stop`
// (drain requests, close what start-up opened, exit), called once.
//
// - SIGTERM: a supervisor (systemd, a container runtime), `kill`, or npm passing on its own SIGTERM
//   (`npm start` is `exec node src/main.ts`, so npm's child is this process; without the exec npm
//   signals an `sh` that dies and leaves us running, orphaned and still serving).
// - SIGINT: Ctrl-C. The terminal sends it to the whole foreground process group, and npm passes its
//   copy on too, so under `npm start` it arrives twice within milliseconds.
// - The parent going away (only when npm started us): npm killed with SIGKILL, or a start script
//   that does not exec. Node has no "parent died" signal (prctl's PDEATHSIG is not exposed), so
//   the parent's pid is compared every PARENT_CHECK_MS.
//
// A repeated request is logged and ignored: the listeners stay installed for the life of the
// process, because removing the last one would restore Node's default action (exit at once) and a
// second Ctrl-C would abort the drain half-way, orphaning an embedded PostgreSQL. A supervisor that
// will not wait escalates to SIGKILL after its own timeout (systemd's TimeoutStopSec).
import type { Logger } from "pino";

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * How often the parent's pid is read (one getppid() call): a second is far inside any supervisor's
 * stop timeout, and costs nothing.
 */
const PARENT_CHECK_MS = 1_000;

export type StopRequestOptions = {
  log: Logger;
  /** Also stop when the parent process exits (set when npm started this process). */
  watch_parent: boolean;
};

/** Calls `stop` with the reason ("SIGTERM", "SIGINT", "parent exited") at the first request only. */
export function whenAskedToStop(options: StopRequestOptions, stop: (reason: string) => void): void {
  let first: string | null = null;
  const ask = (reason: string) => {
    if (first !== null) {
      options.log.info({ reason, stopping_for: first }, "already stopping: waiting for the drain");
      return;
    }
    first = reason;
    stop(reason);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => ask(signal));
  if (options.watch_parent) watchParent(() => ask("parent exited"));
}

/** Calls `gone` once when this process is re-parented (its parent exited). */
function watchParent(gone: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, PARENT_CHECK_MS);
  // Never what keeps the process alive: once everything else is closed it may exit.
  timer.unref();
}

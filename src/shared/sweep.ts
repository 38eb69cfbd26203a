// The background loop every outbox shares (issue 14): rows that need work are claimed in batches
// with `FOR UPDATE SKIP LOCKED`, and claiming a row pushes its due time past how long the work may
// take, so the claim is the lease: a process that dies mid-work leaves rows that come due again by
// themselves, and two processes never claim one row at once. No job row per event.
//
// A sweep here is only the timing: `round` claims at most `limit` rows and does their work; the
// loop runs it every `every_ms`, at once again when a round came back full (more is waiting), and
// at once when `wake()` is called (a NOTIFY, or the process that made the work). Never two rounds
// of one sweep at once; a failed round is logged and the next one runs on time.

export type SweepRound = (limit: number) => Promise<number>;

export type SweepOptions = {
  name: string;
  /** Rows one round claims at most. */
  limit: number;
  /** The timer: the longest a due row waits when nothing wakes the sweep. */
  every_ms: number;
  round: SweepRound;
  onError: (error: unknown) => void;
};

export type Sweep = { wake: () => void; close: () => Promise<void> };

export function startSweep(options: SweepOptions): Sweep {
  let closed = false;
  let again = false;
  let running: Promise<void> | null = null;

  const loop = async (): Promise<void> => {
    do {
      again = false;
      try {
        const claimed = await options.round(options.limit);
        if (claimed >= options.limit) again = true;
      } catch (error) {
        options.onError(error);
      }
    } while (again && !closed);
  };

  const wake = (): void => {
    if (closed) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = loop().finally(() => {
      running = null;
    });
  };

  const timer = setInterval(wake, options.every_ms);
  timer.unref();
  wake();
  return {
    wake,
    close: async () => {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}

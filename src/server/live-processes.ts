// The processes alive now, through PostgreSQL without a row touched per request: each process
// upserts its own row every HEARTBEAT_MS and counts the rows seen within LIVE_WITHIN_MS (two
// statements every few seconds per process). A process that stops deletes its row; one that dies
// stops counting after LIVE_WITHIN_MS. Two uses:
// - the count of processes serving the API splits the rate limit (rate-limit.ts);
// - every process that may hold a lease beats, a worker-only one too (serves_api false, so it
//   takes no share of the rate limit), and names its row beside each lease it takes: a lease
//   whose holder stopped beating may be taken over (shared/liveness.ts). `fresh()` tells this
//   process whether it may still call the carrier for the leases it holds.
// The beat has a pool of its own, one connection: requests that take every connection of the main
// pool must not delay it past LIVE_WITHIN_MS, or a live process would look dead and lose its orders.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type pg from "pg";
import { createPool } from "../db/pool.ts";
import { DRIVE_WITHIN_MS, HEARTBEAT_MS, LIVE_WITHIN_MS, type Liveness } from "../shared/liveness.ts";

/** Rows of processes dead this long are removed by whichever process beats next. */
const FORGET_AFTER_MS = 60_000;

const BEAT_SQL = `
insert into api_processes (process_id, serves_api) values ($1, $2)
on conflict (process_id) do update set seen_at = now()`;

const COUNT_SQL = `
with gone as (
  delete from api_processes where seen_at < now() - make_interval(secs => $2::float8)
)
select count(*)::int as live from api_processes
where serves_api and seen_at >= now() - make_interval(secs => $1::float8)`;

export type LiveProcesses = Liveness & {
  /** Told the count of live API processes after each beat (the first one included, if already done). */
  onCount: (listener: (live: number) => void) => void;
  close: () => Promise<void>;
};

/** The count of API processes alive, and the rows of processes long dead removed. */
async function countLive(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ live: number }>(COUNT_SQL, [
    LIVE_WITHIN_MS / 1000,
    FORGET_AFTER_MS / 1000,
  ]);
  return Math.max(1, rows[0]?.live ?? 1);
}

/**
 * Starts this process's heartbeat on its own connection to `database_url`: the first beat before
 * it returns (so a new process takes its share at once, and holds no lease before its row
 * exists), then every HEARTBEAT_MS, never two at once, each answer awaited at most HEARTBEAT_MS.
 * A failed beat keeps the last count, and `fresh()` turns false DRIVE_WITHIN_MS after the last
 * beat that succeeded was sent.
 */
export async function startLiveProcesses(
  database_url: string,
  options: { serves_api: boolean },
  onError: (error: unknown) => void,
): Promise<LiveProcesses> {
  const pool = createPool(database_url, 1, "esim-heartbeat", { query_timeout_ms: HEARTBEAT_MS });
  const process_id = `${hostname().slice(0, 60)}:${process.pid}:${randomBytes(4).toString("hex")}`;
  let last_ok_sent_at = Number.NEGATIVE_INFINITY;
  let count = 1;
  const listeners: ((live: number) => void)[] = [];
  let beating: Promise<void> | null = null;
  const tick = async () => {
    const sent_at = performance.now();
    await pool.query(BEAT_SQL, [process_id, options.serves_api]);
    // The row's seen_at is no earlier than sent_at: nobody takes our leases before sent_at + LIVE_WITHIN_MS.
    last_ok_sent_at = sent_at;
    count = await countLive(pool);
    for (const listener of listeners) listener(count);
  };
  await tick().catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  const timer = setInterval(() => {
    if (beating !== null) return;
    beating = tick()
      .catch(onError)
      .finally(() => {
        beating = null;
      });
  }, HEARTBEAT_MS);
  timer.unref();
  return {
    process_id,
    fresh: () => performance.now() - last_ok_sent_at < DRIVE_WITHIN_MS,
    onCount: (listener) => {
      listeners.push(listener);
      listener(count);
    },
    close: async () => {
      clearInterval(timer);
      await beating;
      await pool.query("delete from api_processes where process_id = $1", [process_id]).catch(onError);
      await pool.end();
    },
  };
}

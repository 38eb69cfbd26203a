// The API processes alive now, counted through PostgreSQL without a row touched per request: each
// process upserts its own row every HEARTBEAT_MS and counts the rows seen within LIVE_WITHIN_MS
// (two statements every few seconds per process). A process that stops deletes its row; one that
// dies stops counting after LIVE_WITHIN_MS. The count splits the rate limit (rate-limit.ts).
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type pg from "pg";

export const HEARTBEAT_MS = 2_000;
/** Three missed heartbeats: the process is gone. */
const LIVE_WITHIN_MS = 3 * HEARTBEAT_MS;
/** Rows of processes dead this long are removed by whichever process beats next. */
const FORGET_AFTER_MS = 60_000;

const BEAT_SQL = `
insert into api_processes (process_id) values ($1)
on conflict (process_id) do update set seen_at = now()`;

const COUNT_SQL = `
with gone as (
  delete from api_processes where seen_at < now() - make_interval(secs => $2::float8)
)
select count(*)::int as live from api_processes where seen_at >= now() - make_interval(secs => $1::float8)`;

export type LiveProcesses = { process_id: string; close: () => Promise<void> };

/** One heartbeat and count; the count includes this process. */
export async function beat(pool: pg.Pool, process_id: string): Promise<number> {
  await pool.query(BEAT_SQL, [process_id]);
  const { rows } = await pool.query<{ live: number }>(COUNT_SQL, [
    LIVE_WITHIN_MS / 1000,
    FORGET_AFTER_MS / 1000,
  ]);
  return Math.max(1, rows[0]?.live ?? 1);
}

/**
 * Starts this process's heartbeat: the first beat before it returns (so a new process takes its
 * share at once), then every HEARTBEAT_MS, each telling `onCount` how many processes are alive. A
 * failed beat (the database away) keeps the last count.
 */
export async function startLiveProcesses(
  pool: pg.Pool,
  onCount: (live: number) => void,
  onError: (error: unknown) => void,
): Promise<LiveProcesses> {
  const process_id = `${hostname().slice(0, 60)}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const tick = () => beat(pool, process_id).then(onCount).catch(onError);
  await tick();
  const timer = setInterval(() => void tick(), HEARTBEAT_MS);
  timer.unref();
  return {
    process_id,
    close: async () => {
      clearInterval(timer);
      await pool.query("delete from api_processes where process_id = $1", [process_id]).catch(onError);
    },
  };
}

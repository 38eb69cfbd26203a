// What every session of the service must have, checked through a transaction-mode pooler at
// start-up. Directly, the pool sets its own limits at connection start (pool.ts). Through PgBouncer
// it cannot: PgBouncer refuses startup parameters it does not track (statement_timeout,
// idle_in_transaction_session_timeout, options), and a `SET` would stay on one server connection
// while the next transaction runs on another. So the limits are the role's or the database's
// settings, which every server connection PgBouncer opens starts with (README "Behind PgBouncer"):
//
//   ALTER ROLE esim IN DATABASE esim SET statement_timeout = '15s';
//   ALTER ROLE esim IN DATABASE esim SET idle_in_transaction_session_timeout = '30s';
//
// TimeZone is the service's own startup parameter, which PgBouncer does track; it is checked too, so
// that a pooler that drops it fails start-up instead of shifting every "today" by the server's zone.
import type pg from "pg";
import { SESSION_LIMITS } from "./pool.ts";

const SETTINGS_SQL = `
select name, setting from pg_settings
where name in ('TimeZone', 'statement_timeout', 'idle_in_transaction_session_timeout')`;

/** A role-level limit above this is no limit for a request (the pool's own are 15 s and 30 s). */
const MAX_LIMIT_MS = 10 * 60_000;

/** What is wrong with the sessions the pooler hands out; empty when nothing. */
export async function pooledSessionProblems(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string; setting: string }>(SETTINGS_SQL);
  const setting = (name: string) => rows.find((row) => row.name === name)?.setting ?? "";
  const problems: string[] = [];
  if (setting("TimeZone") !== "UTC") {
    problems.push(`TimeZone is "${setting("TimeZone")}", not UTC: the pooler dropped the startup parameter`);
  }
  for (const [name, ours_ms] of Object.entries(SESSION_LIMITS)) {
    const ms = Number(setting(name));
    if (ms > 0 && ms <= MAX_LIMIT_MS) continue;
    problems.push(
      `${name} is ${ms === 0 ? "off" : `${ms} ms`}: set it on the service's role or database ` +
        `(ALTER ROLE ... IN DATABASE ... SET ${name} = '${ours_ms / 1000}s'), 1 ms to ${MAX_LIMIT_MS / 60_000} minutes`,
    );
  }
  return problems;
}

/** Refuses start-up, naming every problem, when sessions through the pooler lack what the service needs. */
export async function checkPooledSessions(pool: pg.Pool): Promise<void> {
  const problems = await pooledSessionProblems(pool);
  if (problems.length === 0) return;
  throw new Error(`DATABASE_URL (a pooler, since DATABASE_DIRECT_URL is set): ${problems.join("; ")}`);
}

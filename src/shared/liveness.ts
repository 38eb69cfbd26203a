// Whether the process holding a lease is still there (issue 30). Every process that may hold a
// lease (an order's or a refund's: ROLE api, worker and all alike) upserts a heartbeat row in
// api_processes every HEARTBEAT_MS (server/live-processes.ts) and writes its process id beside each
// lease it takes (lease_holder, migration 0021). A claim may take a lease before it runs out when
// its holder has not beaten for LIVE_WITHIN_MS: a SIGKILLed process's orders are taken over within
// LIVE_WITHIN_MS plus one retry or sweep interval, not after the lease (six carrier timeouts and a
// second). The check is part of the claiming UPDATE itself (lease_holder_gone, in SQL), so two
// claimers never both win: the second rechecks the row the first wrote, naming a live holder.
//
// A holder that is not dead but stalled (a long GC pause, a blocked event loop, cut off from
// PostgreSQL) may miss its beats while it still means to call the carrier. The rule that keeps two
// drivers from calling at once is on the holder's side: it calls the carrier only while its own
// last successful beat was sent less than DRIVE_WITHIN_MS ago (`fresh()`, from its own monotonic
// clock). Nobody can take over before LIVE_WITHIN_MS after that beat was sent (its seen_at is
// later still), so the call starts at least LIVE_WITHIN_MS - DRIVE_WITHIN_MS (one beat) before any
// takeover can. A call already on the wire when the stall starts cannot be taken back: the
// carrier is idempotent by our reference (the order id; ES2+ by the same reference's intent), so
// that rare overlap provisions and charges once, and every outcome is recorded under
// `status = 'pending'`, once. Recording needs no such check: the answer is the carrier's for our
// reference, true whoever asked. The check is made once per carrier operation: an ES2+ operation's
// several calls (DownloadOrder, ConfirmOrder ...) share one deadline that fits the lease, and are
// not checked one by one. The beat has a connection of its own, so a pool busy with requests
// cannot make a live process look dead.
import { type RawBuilder, sql } from "kysely";

export const HEARTBEAT_MS = 2_000;
/** Three missed heartbeats: the process is gone, and its leases may be taken over. */
export const LIVE_WITHIN_MS = 3 * HEARTBEAT_MS;
/** A holder whose last beat is older than this starts no carrier call: a margin of one beat. */
export const DRIVE_WITHIN_MS = LIVE_WITHIN_MS - HEARTBEAT_MS;

/** This process as a lease holder: what main.ts passes in with the context. */
export type Liveness = {
  readonly process_id: string;
  /** True while this process's last successful heartbeat was sent less than DRIVE_WITHIN_MS ago. */
  fresh(): boolean;
};

/** The holder to write beside a lease: null without a heartbeat (the CLI), ended only by expiry. */
export function holderOf(liveness: Liveness | undefined): string | null {
  return liveness?.process_id ?? null;
}

/**
 * SQL: the lease held in `holder` (a lease_holder column) may be taken over now, its holder gone.
 * Evaluated only for a named holder (the function call is skipped for the common null).
 */
export function holderGone(holder: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`(${holder} is not null and lease_holder_gone(${holder}, ${LIVE_WITHIN_MS / 1000}::float8))`;
}

// SQL of the idempotency_keys table (migration 0001): one row per (partner, Idempotency-Key),
// created 'running' in the same transaction as the top-up order it leads to, naming that order
// from its insert (the order's row follows in the transaction: migration 0016 checks the foreign
// key at COMMIT), and made 'completed' with the exact response bytes when that order reaches a
// final state (finish-topup.ts, in the completion's own transaction) or when the wallet was short.
import { type Selectable, sql, type Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import { sendAhead } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";

export type KeyRef = { partner_id: string; idempotency_key: string };

/**
 * `order_id`: the order a top-up request creates in the key's transaction, written with the key;
 * null for a refund, which links the order it refunds (linkKeyToRefund).
 */
export type NewKey = KeyRef & {
  fingerprint: Buffer;
  request_id: string;
  ttl_hours: number;
  order_id: string | null;
};

export type KeyRow = Pick<
  Selectable<Database["idempotency_keys"]>,
  "fingerprint" | "state" | "order_id" | "refund_of" | "request_id" | "response_status" | "response_body"
> & {
  /**
   * Judged by the database clock, like expires_at was written. Only a completed key expires: a
   * running key guards an order whose outcome is not known yet, however long that takes.
   */
  expired: boolean;
};

/** Creates the key as running; false when a row for it already exists (then nothing is written). */
export async function insertRunningKey(trx: Transaction<Database>, key: NewKey): Promise<boolean> {
  const inserted = await runningKeyInsert(key).execute(trx);
  return inserted.rows.length === 1;
}

/**
 * The same insert sent ahead of the transaction's next statement (sendAhead, a round trip fewer):
 * `inserted()` answers what insertRunningKey would, once that statement has been answered.
 */
export async function insertRunningKeyAhead(
  trx: Transaction<Database>,
  key: NewKey,
): Promise<{ inserted(): Promise<boolean> }> {
  const ahead = await sendAhead(() => runningKeyInsert(key).execute(trx));
  return { inserted: async () => (await ahead.rows()).length === 1 };
}

/** The insert as both forms send it; `returning` tells new from known, a kept answer having rows only. */
function runningKeyInsert(key: NewKey) {
  return sql<{ inserted: boolean }>`
    insert into idempotency_keys (partner_id, idempotency_key, fingerprint, state, order_id, request_id,
                                  expires_at)
    values (${key.partner_id}, ${key.idempotency_key}, ${key.fingerprint}, 'running', ${key.order_id},
            ${key.request_id}, now() + make_interval(hours => ${key.ttl_hours}))
    on conflict (partner_id, idempotency_key) do nothing
    returning true as inserted`;
}

/** Reads and row-locks an existing key until the transaction ends. */
export async function lockKey(trx: Transaction<Database>, key: KeyRef): Promise<KeyRow | null> {
  const result = await sql<KeyRow>`
    select fingerprint, state, order_id, refund_of, request_id, response_status, response_body,
           state = 'completed' and expires_at <= now() as expired
    from idempotency_keys
    where partner_id = ${key.partner_id} and idempotency_key = ${key.idempotency_key}
    for update`.execute(trx);
  return result.rows[0] ?? null;
}

/** An expired key (not purged yet) starts over as a new request: the old row is replaced in place. */
export async function restartExpiredKey(trx: Transaction<Database>, key: NewKey): Promise<void> {
  const updated = await sql`
    update idempotency_keys
    set fingerprint = ${key.fingerprint}, state = 'running', order_id = ${key.order_id}, refund_of = null,
        request_id = ${key.request_id},
        response_status = null, response_body = null, created_at = now(),
        expires_at = now() + make_interval(hours => ${key.ttl_hours})
    where partner_id = ${key.partner_id} and idempotency_key = ${key.idempotency_key}
      and state = 'completed' and expires_at <= now()`.execute(trx);
  if (Number(updated.numAffectedRows) !== 1)
    throw new Error("restartExpiredKey: the locked expired row is gone");
}

/** Links a running refund key to the order it refunds (migration 0008: `refund_of`). */
export async function linkKeyToRefund(
  trx: Transaction<Database>,
  key: KeyRef,
  order_id: string,
): Promise<void> {
  const updated = await sql`
    update idempotency_keys set refund_of = ${order_id}
    where partner_id = ${key.partner_id} and idempotency_key = ${key.idempotency_key}
      and state = 'running' and order_id is null`.execute(trx);
  if (Number(updated.numAffectedRows) !== 1)
    throw new Error("linkKeyToRefund: the claimed key is not running");
}

/** Stores a refund's final outcome on its running keys, kept at least `ttl_hours` from now. */
export async function completeKeysOfRefund(
  trx: Transaction<Database>,
  order_id: string,
  outcome: { status: number; body: string },
  ttl_hours: number,
): Promise<void> {
  await sql`
    update idempotency_keys
    set state = 'completed', response_status = ${outcome.status}, response_body = ${outcome.body},
        expires_at = greatest(expires_at, now() + make_interval(hours => ${ttl_hours}))
    where refund_of = ${order_id} and state = 'running'`.execute(trx);
}

/** The request id of the running key that created this order, row-locked; null when none did. */
export async function lockRunningKeyOfOrder(
  trx: Transaction<Database>,
  order_id: string,
): Promise<{ request_id: string } | null> {
  const key = await sql<{ request_id: string }>`
    select request_id from idempotency_keys where order_id = ${order_id} and state = 'running' for update`.execute(
    trx,
  );
  return key.rows[0] ?? null;
}

/**
 * Stores the order's final outcome on its running key, and keeps the key at least `ttl_hours`
 * from now: an order that stayed pending long still leaves its client a whole retention period.
 */
export async function completeKeyOfOrder(
  trx: Transaction<Database>,
  order_id: string,
  outcome: { status: number; body: string },
  ttl_hours: number,
): Promise<void> {
  await sql`
    update idempotency_keys
    set state = 'completed', response_status = ${outcome.status}, response_body = ${outcome.body},
        expires_at = greatest(expires_at, now() + make_interval(hours => ${ttl_hours}))
    where order_id = ${order_id} and state = 'running'`.execute(trx);
}

/**
 * Stores a final outcome that no order carries (402: the order was never created), and unnames the
 * order the key was inserted with, which now never will be.
 */
export async function completeKeyWithoutOrder(
  trx: Transaction<Database>,
  key: KeyRef & Pick<NewKey, "order_id">,
  outcome: { status: number; body: string },
): Promise<void> {
  const updated = await sql`
    update idempotency_keys
    set state = 'completed', order_id = null, response_status = ${outcome.status},
        response_body = ${outcome.body}
    where partner_id = ${key.partner_id} and idempotency_key = ${key.idempotency_key}
      and state = 'running' and order_id is not distinct from ${key.order_id}`.execute(trx);
  if (Number(updated.numAffectedRows) !== 1)
    throw new Error("completeKeyWithoutOrder: the claimed key is not running");
}

/** The stored response of a completed key, or null while it runs (or once it is gone). */
export async function storedResponse(
  db: Executor,
  key: KeyRef,
): Promise<{ status: number; body: string } | null> {
  const result = await sql<{ response_status: number; response_body: string }>`
    select response_status, response_body from idempotency_keys
    where partner_id = ${key.partner_id} and idempotency_key = ${key.idempotency_key} and state = 'completed'`.execute(
    db,
  );
  const row = result.rows[0];
  return row ? { status: row.response_status, body: row.response_body } : null;
}

/**
 * Deletes up to `limit` expired keys, oldest expiry first, and returns how many. Rows locked by a
 * request that is restarting them right now are skipped, never waited for. A running key is never
 * purged: its order is still pending, and a retry with the key must find it, not start another.
 */
export async function deleteExpiredKeys(db: Executor, limit: number): Promise<number> {
  const deleted = await sql`
    delete from idempotency_keys
    where (partner_id, idempotency_key) in (
      select partner_id, idempotency_key from idempotency_keys
      where state = 'completed' and expires_at <= now()
      order by expires_at
      limit ${limit}
      for update skip locked)`.execute(db);
  return Number(deleted.numAffectedRows);
}

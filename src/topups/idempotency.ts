// The Idempotency-Key machinery of the partner's money-moving POSTs, as other domains use it: the
// top-up submit (submit-topup.ts) and the refund (src/refunds/). One table, one set of rules:
// same key and same request replays the stored outcome, another request under the key is 422, a
// running one answers 409 or is continued. A key is claimed first thing in the transaction that
// records the intent it guards, so a validation error rolls the key back with everything else.
import assert from "node:assert/strict";
import type { Transaction } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import {
  completeKeysOfRefund,
  insertRunningKey,
  insertRunningKeyAhead,
  type KeyRef,
  type KeyRow,
  linkKeyToRefund,
  lockKey,
  type NewKey,
  restartExpiredKey,
  storedResponse,
} from "./idempotency-keys.sql.ts";

export type { KeyRef, NewKey };

/**
 * The Idempotency-Key of this request, parsed, with the fingerprint of the request it came with
 * (stored), and the previous release's fingerprint of it (matched, never stored).
 */
export type IdempotencyClaim = {
  idempotency_key: string;
  fingerprint: Buffer;
  legacy_fingerprint: Buffer;
  request_id: string;
};

/** Exact bytes to send: a stored outcome, or one stored just now. */
export type StoredOutcome = { status: number; body: string; replayed: boolean };

/** What an existing key says: its stored outcome, or the order its first request is still driving. */
export type KeyAnswer = { kind: "stored"; stored: StoredOutcome } | { kind: "running"; order_id: string };

/** Claims attempted per request: a second try only follows a purge that raced the first. */
const MAX_CLAIM_ATTEMPTS = 3;

export type Claim = { kind: "new" } | { kind: "existing"; row: KeyRow };

/** Inserts the key as running, or locks the existing row; an expired row starts over as new. */
export async function claimKey(trx: Transaction<Database>, key: NewKey): Promise<Claim> {
  return claimFrom(trx, key, await insertRunningKey(trx, key));
}

/**
 * The same claim, its insert sent with the transaction's next statement (a round trip fewer when
 * the key is new, the common case): `claim()` answers what claimKey would, once that statement
 * has been answered; only a key that exists costs the statements after.
 */
export async function claimKeyAhead(
  trx: Transaction<Database>,
  key: NewKey,
): Promise<{ claim(): Promise<Claim> }> {
  const ahead = await insertRunningKeyAhead(trx, key);
  return { claim: async () => claimFrom(trx, key, await ahead.inserted()) };
}

/** The claim after its first insert: new if it inserted, else the existing row, locked. */
async function claimFrom(trx: Transaction<Database>, key: NewKey, inserted: boolean): Promise<Claim> {
  if (inserted) return { kind: "new" };
  for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
    if (attempt > 0 && (await insertRunningKey(trx, key))) return { kind: "new" };
    const row = await lockKey(trx, key);
    if (row === null) continue; // purged between the two statements: insert again
    if (row.expired) {
      await restartExpiredKey(trx, key);
      return { kind: "new" };
    }
    return { kind: "existing", row };
  }
  throw new Error(`idempotency key claim did not settle in ${MAX_CLAIM_ATTEMPTS} attempts`);
}

/**
 * What an unexpired key answers: 422 for another request, its stored outcome, or the order its
 * first request created (a top-up) or refunds (a refund). `what` names a new request in the 422.
 */
export function answerExisting(
  row: KeyRow,
  claim: Pick<IdempotencyClaim, "fingerprint" | "legacy_fingerprint">,
  what = "top-up",
): KeyAnswer {
  if (!row.fingerprint.equals(claim.fingerprint) && !row.fingerprint.equals(claim.legacy_fingerprint)) {
    throw new ApiError(
      "idempotency_key_reused",
      "This Idempotency-Key was used with a different request (method, path or body). Nothing was charged; " +
        `use a new key for a new ${what}.`,
    );
  }
  if (row.state === "completed") {
    assert.ok(row.response_status !== null && row.response_body !== null, "a completed key has a response");
    return {
      kind: "stored",
      stored: { status: row.response_status, body: row.response_body, replayed: true },
    };
  }
  const order_id = row.order_id ?? row.refund_of;
  assert.ok(order_id, "a running key is linked to the order its first request created or refunds");
  return { kind: "running", order_id };
}

/** The stored outcome of a completed key, or null while it runs (or once it is gone). */
export async function storedOutcome(db: Executor, key: KeyRef): Promise<StoredOutcome | null> {
  const stored = await storedResponse(db, key);
  return stored === null ? null : { ...stored, replayed: true };
}

/** Names the order a refund key refunds; the key stays running until the refund is final. */
export async function linkRefundKey(
  trx: Transaction<Database>,
  key: KeyRef,
  order_id: string,
): Promise<void> {
  await linkKeyToRefund(trx, key, order_id);
}

/**
 * Stores a refund's final outcome on every running key of it (a retry under a second key may have
 * joined), kept at least `ttl_hours` from now. Runs in the transaction that makes it final.
 */
export async function completeRefundKeys(
  trx: Transaction<Database>,
  order_id: string,
  outcome: { status: number; body: string },
  ttl_hours: number,
): Promise<void> {
  await completeKeysOfRefund(trx, order_id, outcome, ttl_hours);
}

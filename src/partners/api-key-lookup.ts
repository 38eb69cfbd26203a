// What the authentication hook (server/auth.ts) asks of the partners domain: whose key a
// presented API key is, and the batched record of which keys were used.
import type { Executor } from "../db/executor.ts";
import { activeKeyPartner, findKeyByHash, type KeyRecord, touchKeys } from "./partners.sql.ts";

export type { KeyRecord };

/** The key record of a presented API key by its SHA-256 (`hashApiKey`, a unique index), or null. */
export async function findApiKey(db: Executor, key_hash: Buffer): Promise<KeyRecord | null> {
  return findKeyByHash(db, key_hash);
}

/** Sets last_used_at on these keys to now. */
export async function recordKeysUsed(db: Executor, key_ids: string[]): Promise<void> {
  await touchKeys(db, key_ids);
}

/** Whether the key still works (exists, not revoked) for this partner: a console session's check. */
export async function keyIsActive(db: Executor, key_id: string, partner_id: string): Promise<boolean> {
  return (await activeKeyPartner(db, key_id)) === partner_id;
}

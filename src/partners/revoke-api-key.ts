// Operator use case: revoke a key at once. The transaction also notifies every API process,
// which drops the key from its cache (server/auth.ts); revoking twice is harmless. The first
// revocation is audited in the same transaction; a repeated one changes nothing and is not.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { lockKey, revokeKey } from "./partners.sql.ts";

export async function revokeApiKey(db: Kysely<Database>, key_id: string, actor: Actor): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Locked: two concurrent revocations of one key write one audit entry between them.
    const key = await lockKey(trx, key_id);
    if (key === null) throw new ApiError("api_key_not_found", `No API key ${key_id}.`);
    await revokeKey(trx, key_id);
    if (key.revoked) return;
    await recordAudit(trx, {
      actor,
      action: "api_key.revoked",
      partner_id: key.partner_id,
      target: { type: "api_key", id: key_id },
    });
  });
}

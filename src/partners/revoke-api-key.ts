// Operator use case: revoke a key at once. The transaction also notifies every API process,
// which drops the key from its cache (http/auth.ts); revoking twice is harmless.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { revokeKey } from "./partners.sql.ts";

export async function revokeApiKey(db: Kysely<Database>, key_id: string): Promise<void> {
  const found = await db.transaction().execute((trx) => revokeKey(trx, key_id));
  if (!found) throw new ApiError("api_key_not_found", `No API key ${key_id}.`);
}

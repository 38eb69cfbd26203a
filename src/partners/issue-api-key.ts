// Operator use case: another key for a partner (key rotation: issue the new, then revoke the old),
// with a name, a scope and the addresses it may be used from (issue 31), audited in its transaction.
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import { recordAudit } from "../audit/record-audit.ts";
import type { AppEnv } from "../config.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { generateApiKey } from "./api-keys.ts";
import { checkKeyAccess, KeyAccessFields, type KeyAccessInput } from "./key-access.ts";
import { countKeys, insertApiKey, lockPartner } from "./partners.sql.ts";

export const IssuedApiKey = Type.Object(
  { api_key: Type.String({ description: "Shown once." }), key_id: Type.String(), ...KeyAccessFields },
  { additionalProperties: false },
);

export type IssuedApiKey = Static<typeof IssuedApiKey>;

/** A partner may hold this many keys (active or revoked); rotation needs two, never thousands. */
const MAX_KEYS_PER_PARTNER = 100;

export async function issueApiKey(
  db: Kysely<Database>,
  input: { partner_id: string; app_env: AppEnv; actor: Actor; options?: KeyAccessInput },
): Promise<IssuedApiKey> {
  // Checked before anything is locked: a wrong CIDR is 400 whatever the partner's state.
  const requested = checkKeyAccess(input.options ?? {});
  const key = generateApiKey(input.app_env);
  const key_id = newId("key");
  const access = await db.transaction().execute(async (trx) => {
    // Counted under the partner's row lock: concurrent issues for one partner wait for each other,
    // so each counts the keys the previous one committed and the cap holds.
    if (!(await lockPartner(trx, input.partner_id))) {
      throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
    }
    if ((await countKeys(trx, input.partner_id)) >= MAX_KEYS_PER_PARTNER) {
      throw new ApiError(
        "api_key_limit_reached",
        `A partner can hold at most ${MAX_KEYS_PER_PARTNER} keys, revoked ones included.`,
      );
    }
    const stored = await insertApiKey(trx, {
      key_id,
      partner_id: input.partner_id,
      key_hash: key.key_hash,
      key_hint: key.key_hint,
      access: requested,
    });
    // Never the key itself: the entry says what the key may do, not how to use it.
    await recordAudit(trx, {
      actor: input.actor,
      action: "api_key.created",
      partner_id: input.partner_id,
      target: { type: "api_key", id: key_id },
      details: { name: stored.name, scope: stored.scope, allowed_ips: stored.allowed_ips },
    });
    return stored;
  });
  return { api_key: key.api_key, key_id, ...access };
}

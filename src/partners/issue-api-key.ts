// Operator use case: another key for a partner (key rotation: issue the new, then revoke the old).
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import type { AppEnv } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { ApiError } from "../shared/errors.ts";
import { newId } from "../shared/ids.ts";
import { generateApiKey } from "./api-keys.ts";
import { insertApiKey, partnerExists } from "./partners.sql.ts";

export const IssuedApiKey = Type.Object(
  { api_key: Type.String({ description: "Shown once." }), key_id: Type.String() },
  { additionalProperties: false },
);

export type IssuedApiKey = Static<typeof IssuedApiKey>;

/** A partner may hold this many keys (active or revoked); rotation needs two, never thousands. */
const MAX_KEYS_PER_PARTNER = 100;

export async function issueApiKey(
  db: Kysely<Database>,
  input: { partner_id: string; app_env: AppEnv },
): Promise<IssuedApiKey> {
  const key = generateApiKey(input.app_env);
  const key_id = newId("key");
  await db.transaction().execute(async (trx) => {
    if (!(await partnerExists(trx, input.partner_id))) {
      throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
    }
    const count = await trx
      .selectFrom("api_keys")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("partner_id", "=", input.partner_id)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_KEYS_PER_PARTNER) {
      throw new ApiError("invalid_request", `A partner can hold at most ${MAX_KEYS_PER_PARTNER} keys.`);
    }
    await insertApiKey(trx, {
      key_id,
      partner_id: input.partner_id,
      key_hash: key.key_hash,
      key_hint: key.key_hint,
    });
  });
  return { api_key: key.api_key, key_id };
}

// Operator use case: a new partner, its wallet and its first API key, in one transaction.
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import { recordAudit } from "../audit/record-audit.ts";
import type { AppEnv } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { openWallet } from "../ledger/accounts.ts";
import type { Actor } from "../shared/actor.ts";
import { newId } from "../shared/ids.ts";
import { generateApiKey } from "./api-keys.ts";
import { insertApiKey, insertPartner } from "./partners.sql.ts";

export const CreatedPartner = Type.Object(
  {
    partner_id: Type.String(),
    name: Type.String(),
    api_key: Type.String({ description: "Shown once. Only its hash is stored." }),
    key_id: Type.String(),
  },
  { additionalProperties: false },
);

export type CreatedPartner = Static<typeof CreatedPartner>;

export async function createPartner(
  db: Kysely<Database>,
  input: { name: string; app_env: AppEnv; currency: string },
  actor: Actor,
): Promise<CreatedPartner> {
  const partner_id = newId("partner");
  const key_id = newId("key");
  const key = generateApiKey(input.app_env);
  await db.transaction().execute(async (trx) => {
    await insertPartner(trx, partner_id, input.name);
    await openWallet(trx, partner_id, input.currency);
    await insertApiKey(trx, { key_id, partner_id, key_hash: key.key_hash, key_hint: key.key_hint });
    await recordAudit(trx, {
      actor,
      action: "partner.created",
      partner_id,
      target: { type: "partner", id: partner_id },
      details: { name: input.name, currency: input.currency, first_key_id: key_id },
    });
  });
  return { partner_id, name: input.name, api_key: key.api_key, key_id };
}

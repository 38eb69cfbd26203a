// The `purge_user_tokens` job: invitation and password-reset links (user_tokens, stored as hashes)
// are kept a day past their expiry, so that a late click still reads "this link has expired", then
// deleted, so that the table holds the links that may still be used and does not only grow.
// Scheduled hourly by graphile-worker's crontab in every process (src/server/worker.ts), each tick
// run once across them. Nothing reads a link past its expiry but that message and the reset form's
// budget (links asked for in the last minutes), so a purge that lags harms nobody.
import type { Task } from "graphile-worker";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { AppContext } from "../shared/context.ts";
import { deleteUserTokensExpiredBefore } from "./users.sql.ts";

export const PURGE_USER_TOKENS_TASK = "purge_user_tokens";
/** Hourly, at minute 50, apart from the other purges (minutes 0, 15, 30 and 45). */
export const PURGE_USER_TOKENS_CRONTAB = `50 * * * * ${PURGE_USER_TOKENS_TASK}`;

/** How long an expired link is kept, to be told apart from a link that never was. */
export const EXPIRED_LINK_KEPT_MS = 86_400_000;
/** Links per statement, and statements per run: a backlog continues at the next tick. */
const BATCH_SIZE = 1_000;
const MAX_BATCHES = 20;

export async function purgeUserTokens(db: Kysely<Database>, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - EXPIRED_LINK_KEPT_MS);
  let purged = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const deleted = await deleteUserTokensExpiredBefore(db, before, BATCH_SIZE);
    purged += deleted;
    if (deleted < BATCH_SIZE) break;
  }
  return purged;
}

export function purgeUserTokensTask(ctx: AppContext): Task {
  return async (_payload, helpers) => {
    const purged = await purgeUserTokens(ctx.db);
    helpers.logger.info(`purged ${purged} sign-in links expired more than a day ago`);
  };
}

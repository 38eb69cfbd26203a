// The services a use case may need, built once by main.ts and passed in: the HTTP routes, the
// background worker and the CLI get the same object. Nothing is a module-level singleton.
import type { Kysely } from "kysely";
import type pg from "pg";
import type { Carrier } from "../carrier/carrier.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import type { KeyedSlots } from "./keyed-slots.ts";
import type { Liveness } from "./liveness.ts";

export type AppContext = {
  config: Config;
  pool: pg.Pool;
  db: Kysely<Database>;
  carrier: Carrier;
  /** CSV statement exports running at once (CSV_EXPORTS_PER_PROCESS, CSV_EXPORTS_PER_PARTNER). */
  csv_exports: KeyedSlots;
  /**
   * This process's heartbeat, named beside each lease it takes (liveness.ts); absent where nothing
   * beats (the CLI, tests that build a context): such leases end only when they run out.
   */
  liveness?: Liveness;
};

// The carrier the CLI asks (`orders settle`, `refunds settle`): the service's CARRIER_URL, or in a
// sandbox without one, the simulator started in-process over the same database. The simulator
// keeps all its state in the database (carrier_sim), so this instance knows every reference the
// service's own simulator answered.
import type { Carrier } from "../carrier/carrier.ts";
import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";
import type { AppContext } from "../shared/context.ts";
import { KeyedSlots } from "../shared/keyed-slots.ts";
import { startCarrier } from "../suppliers/start-carrier.ts";
import type { CliContext } from "./command.ts";

/** A command's context with the carrier it asks, as the service's use cases take it. */
export function withCarrierContext(ctx: CliContext, carrier: Carrier): AppContext {
  return {
    config: ctx.config,
    pool: ctx.pool,
    db: ctx.db,
    carrier,
    // No HTTP here: nothing is exported, but a context carries the bound all the same.
    csv_exports: new KeyedSlots(ctx.config.csv_exports_per_process, ctx.config.csv_exports_per_partner),
  };
}

export async function withCarrier<T>(
  config: Config,
  pool: Pool,
  work: (carrier: Carrier) => Promise<T>,
): Promise<T> {
  const started = await startCarrier(config, pool, () => undefined);
  try {
    return await work(started.carrier);
  } finally {
    for (const closer of started.closers.reverse()) await closer.close();
  }
}

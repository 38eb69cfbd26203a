// The carrier the CLI asks (only `orders settle` does): the service's CARRIER_URL, or in a
// sandbox without one, the simulator started in-process over the same database. The simulator
// keeps all its state in the database (carrier_sim), so this instance knows every reference the
// service's own simulator answered.
import type { Carrier } from "../carrier/carrier.ts";
import { startCarrier } from "../carrier/start-carrier.ts";
import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";

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

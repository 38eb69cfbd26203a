// Slow carrier: purchases with a 250 ms carrier, against Little's law for the connections.
import { request } from "../../test/support/http.ts";
import { submitRun } from "../support/carts.ts";
import { type Context, SERVICE_POOL_MAX, SLOW_CARRIER_MS } from "../support/context.ts";
import { ratio, record, wrkScenario } from "../support/runner.ts";

export async function slowCarrier(
  ctx: Context,
  concurrency: number,
  purchase_per_s: number | null,
): Promise<void> {
  await request(ctx.simulator.url, "POST", "/control", {
    key: ctx.simulator_key,
    body: { latency_ms: SLOW_CARRIER_MS },
  });
  try {
    const bound = concurrency / (SLOW_CARRIER_MS / 1000);
    const run = await submitRun(ctx, `slow${concurrency}`, concurrency, 0.8 * bound, bound * 1.02);
    const result = wrkScenario(
      `slow carrier ${SLOW_CARRIER_MS} ms, ${concurrency} clients`,
      concurrency === 256 ? "≥ 0.8 × Little" : "(≥ 0.8 × Little at 256)",
      concurrency,
      run,
      true,
    );
    // A request that held one of the service's pooled connections through the carrier call
    // could not go faster than pool size / latency, whatever the CPU.
    const held_connection_cap = SERVICE_POOL_MAX / (SLOW_CARRIER_MS / 1000);
    result.notes.push(
      `Little's law bound ${bound}/s`,
      `${(result.ok_per_s / held_connection_cap).toFixed(2)} × the ${held_connection_cap}/s cap of a design holding one of ${SERVICE_POOL_MAX} connections during the call`,
      ...(purchase_per_s !== null
        ? [`${(result.ok_per_s / purchase_per_s).toFixed(2)} × the purchase rate with a carrier latency of 0`]
        : []),
      `${run.emails_sent} confirmation emails sent during the run, ${run.emails_queued} still queued at the end`,
    );
    record(ctx, result, {
      name: `slow carrier ${concurrency}: purchases/s / (${concurrency} / ${SLOW_CARRIER_MS / 1000} s)`,
      value: result.ok_per_s / bound,
      target: 0.8,
      explain: "no database connection or lock is held while the carrier answers",
    });
    if (concurrency === 256 && purchase_per_s !== null && purchase_per_s > 0) {
      ratio(
        ctx,
        "slow carrier 256: purchases/s / purchases/s with a carrier latency of 0",
        result.ok_per_s / purchase_per_s,
        0.95,
        "250 ms of carrier latency costs no throughput: nothing but the request waits on it",
      );
    }
  } finally {
    await request(ctx.simulator.url, "POST", "/control", { key: ctx.simulator_key, body: { latency_ms: 0 } });
  }
}

// The faults of a chaos run: the killer (SIGKILLs and restarts, sometimes armed with a crash
// point), the supervisor that restarts a process that died by itself, and the carrier's weather.
import { CRASH_POINTS } from "../../../src/lib/crash-points.ts";
import type { ServiceProcess } from "../cluster.ts";
import { createRng, type Rng } from "../rng.ts";
import { type Run, sleep } from "./state.ts";

/** Serialises restarts of one slot: a kill and a supervisor restart never overlap. */
export function withSlot<T>(run: Run, slot: number, work: () => Promise<T>): Promise<T> {
  const previous = run.slotLocks[slot] ?? Promise.resolve();
  const next = previous.then(work, work);
  run.slotLocks[slot] = next.catch(() => undefined);
  return next;
}

export const START_ATTEMPTS = 3;

export async function startSlot(run: Run, slot: number, rng: Rng | null): Promise<void> {
  const point = rng && run.options.crash_points && rng.chance(0.25) ? rng.pick(CRASH_POINTS) : null;
  for (let attempt = 1; ; attempt++) {
    try {
      const service = await run.cluster.startService(slot, point ? { CRASH_AT: point } : {});
      run.stats.restarts += 1;
      if (point) {
        run.armed.add(slot);
        run.stats.armed_restarts += 1;
      } else {
        run.armed.delete(slot);
      }
      watch(run, slot, service);
      return;
    } catch (error) {
      // A start can fail on a machine this busy (the start timeout); a second try is what an operator does.
      if (attempt >= START_ATTEMPTS) throw error;
      run.options.log(
        `  API process ${slot} did not start (${(error as Error).message.split("\n")[0]}); again`,
      );
    }
  }
}

/** Restarts a process that died by itself (at a crash point) rather than by our hand. */
export function watch(run: Run, slot: number, service: ServiceProcess): void {
  service.process.once("exit", () => {
    // Our kills empty the slot first; a process that leaves its slot occupied died by itself.
    if (run.cluster.services[slot] !== service || run.stopping) return;
    run.stats.crash_point_deaths += 1;
    run.cluster.services[slot] = null;
    const rng = createRng(run.options.seed, `supervisor-${slot}-${run.stats.crash_point_deaths}`);
    void withSlot(run, slot, () => startSlot(run, slot, run.streaming ? rng : null)).catch((error) =>
      run.breach(`restarting API process ${slot} failed: ${(error as Error).message}`),
    );
  });
}

export async function killer(run: Run): Promise<void> {
  const rng = createRng(run.options.seed, "killer");
  const slots = run.cluster.services.length;
  for (let i = 0; i < run.options.kills; i++) {
    const at = (i + 0.2 + 0.6 * rng.next()) / run.options.kills;
    while (run.progress() < at) await sleep(25);
    const slot = rng.int(0, slots - 1);
    const restart_delay_ms = rng.int(100, 1500);
    await withSlot(run, slot, async () => {
      await run.cluster.killService(slot);
      run.stats.kills += 1;
      run.options.log(
        `  kill ${run.stats.kills}: API process ${slot} (SIGKILL), restart in ${restart_delay_ms} ms`,
      );
      await sleep(restart_delay_ms);
      await startSlot(run, slot, rng);
    });
  }
}

export async function faultChanger(run: Run): Promise<void> {
  const rng = createRng(run.options.seed, "faults");
  while (run.streaming) {
    const roll = rng.next();
    const settings =
      roll < 0.25
        ? { latency_ms: rng.int(0, 50), refuse_share: 0, timeout_share: 0, fail_share: 0, down: false }
        : roll < 0.45
          ? { latency_ms: rng.int(100, 400), refuse_share: 0, timeout_share: 0, fail_share: 0, down: false }
          : roll < 0.65
            ? {
                latency_ms: rng.int(0, 100),
                refuse_share: rng.int(10, 30) / 100,
                timeout_share: 0,
                fail_share: 0,
                down: false,
              }
            : roll < 0.85
              ? {
                  latency_ms: rng.int(0, 100),
                  refuse_share: 0.05,
                  timeout_share: rng.int(10, 30) / 100,
                  fail_share: 0,
                  down: false,
                }
              : roll < 0.95
                ? {
                    latency_ms: 0,
                    refuse_share: 0,
                    timeout_share: 0.1,
                    fail_share: rng.int(20, 50) / 100,
                    down: false,
                  }
                : { latency_ms: 0, refuse_share: 0, timeout_share: 0, fail_share: 0, down: true };
    await run.cluster.simulator.control(settings);
    // The SM-DP+'s weather: lost answers after the work (drop), 500s before it, bad headers, latency.
    await run.cluster.smdp?.control({
      latency_ms: rng.int(0, 100),
      drop_share: rng.chance(0.4) ? rng.int(5, 30) / 100 : 0,
      fail_share: rng.chance(0.3) ? rng.int(5, 30) / 100 : 0,
      bad_header_share: rng.chance(0.2) ? rng.int(5, 20) / 100 : 0,
    });
    await supplierWeather(run, rng);
    run.stats.fault_changes += 1;
    // An outage is short; other weather lasts a few seconds.
    const hold_ms = settings.down ? rng.int(800, 2000) : rng.int(2000, 5000);
    const until = Date.now() + hold_ms;
    while (run.streaming && Date.now() < until) await sleep(50);
  }
}

/**
 * Restarts PostgreSQL under the stream, alternately `fast` (an upgrade's restart: sessions
 * terminated, 57P01) and `immediate` (a crash: no goodbye, recovery from the WAL), each down for
 * a moment. Requests in flight must be answered 503 or lose their connection, never 500, and
 * every process must carry on by itself. Kept in the first 70% of the stream so that each
 * recovery (the first purchase answered 200 after PostgreSQL is back) is seen while it streams.
 */
export async function postgresRestarter(run: Run): Promise<void> {
  const restart = run.cluster.restartPostgres;
  const count = run.options.postgres_restarts;
  if (count === 0) return;
  if (restart === null) throw new Error("PostgreSQL restarts need a cluster with its own PostgreSQL");
  const rng = createRng(run.options.seed, "postgres");
  for (let i = 0; i < count; i++) {
    const at = (0.7 * (i + 0.3 + 0.5 * rng.next())) / count;
    while (run.streaming && run.progress() < at) await sleep(25);
    if (!run.streaming) return;
    const mode = i % 2 === 0 ? "fast" : "immediate";
    const down_ms = rng.int(200, 1500);
    const stopped_at = performance.now();
    const back_at = await restart(mode, down_ms);
    run.stats.postgres_restarts.push({
      mode,
      down_ms: back_at - stopped_at,
      back_at,
      first_ok_ms: null,
      recovered_ms: null,
    });
    run.options.log(
      `  PostgreSQL restart ${i + 1} (-m ${mode}): down ${Math.round(back_at - stopped_at)} ms, back now`,
    );
  }
}

/** A delay past SUPPLIER_TIMEOUT_MS (options.ts): the call is given up on and lands afterwards. */
const SUPPLIER_SLOW_MS = 2_500;

/**
 * The suppliers' weather, armed through each fake's control API. On a sale (Airalo's order or
 * top-up, eSIM Go's POST /orders) and a refund (eSIM Go's revoke): the work committed and the
 * answer lost (a 500, a dropped connection), an answer that comes after our timeout, a 429 or
 * maintenance (Airalo's code 13: nothing made, asked again at once), a refusal (Airalo's code 33,
 * out of stock: the order fails, nothing charged). On the lookups and reads around them: dropped
 * connections, 503s, Airalo's code 53. Not on a sale: a lost answer with nothing made (a drop
 * before the work, a 5xx, code 53), which by design holds the order for the adapters' in-flight
 * window (15 minutes, DEFAULT_IN_FLIGHT_MS in src/carrier/airalo/config.ts and esimgo/config.ts) before anything is posted again: far beyond a
 * drain, it would only show as pending orders. Each fault hits the next 1-3 matching calls; what
 * is still armed when the stream ends is cleared by the drain.
 */
export async function supplierWeather(run: Run, rng: Rng): Promise<void> {
  const fakes = run.cluster.suppliers;
  if (fakes === null || !run.options.suppliers) return;
  const times = rng.int(1, 3);
  const sale = rng.pick(["order", "topup"] as const);
  const read = rng.pick(["orders_list", "order_get", "sim", "sim_packages", "usage"] as const);
  const airalo = rng.pick([
    { operation: sale, kind: "commit_then_500" },
    { operation: sale, kind: "drop_after_commit" },
    { operation: sale, kind: "delay", delay_ms: SUPPLIER_SLOW_MS },
    { operation: sale, kind: "error", code: 13 },
    { operation: sale, kind: "error", code: 33 },
    { operation: sale, kind: "status", status: 429 },
    { operation: read, kind: "drop" },
    { operation: read, kind: "error", code: 53 },
    { operation: read, kind: "status", status: 503 },
  ]);
  await fakes.airalo.control("/control", { arm: [{ ...airalo, times }] });
  // A purchase or a top-up is a POST of /orders, a refund a DELETE under /esims, reads are GETs.
  const work = rng.pick([
    { method: "POST", path: "/orders" },
    { method: "DELETE", path: "/esims" },
  ]);
  const get = { method: "GET", path: rng.pick(["/orders", "/esims"]) };
  const esimgo = rng.pick([
    { ...work, kind: "commit_then_500" },
    { ...work, kind: "drop_after_commit" },
    { ...work, kind: "delay", delay_ms: SUPPLIER_SLOW_MS },
    { method: "POST", path: "/orders", kind: "error", status: 429 },
    { ...get, kind: "drop" },
    { ...get, kind: "error", status: 503 },
  ]);
  await fakes.esimgo.control("/sandbox/control", { faults: [{ ...esimgo, times }] });
  run.count(run.stats.suppliers, `airalo fault ${airalo.kind}`);
  run.count(run.stats.suppliers, `esimgo fault ${esimgo.kind}`);
}

// `npm run chaos`: purchases and top-ups under fire. Two API processes and the carrier simulator
// run as child processes against one PostgreSQL (test/support/cluster.ts). Client loops drive a
// stream of purchases (cart + submit), top-ups (Idempotency-Key) and reads with the retries a
// careful partner makes: same cart_key, same key and body, a short client timeout now and then
// (the client gives up mid-request and asks again), duplicate submits racing on both processes.
// Meanwhile a killer SIGKILLs a random API process at random moments and restarts it (sometimes
// armed with a CRASH_AT point, so it dies again at the worst moment of a purchase), and the
// carrier's faults (latency, refusals, timeouts, 503s, outages) change every few seconds.
// Afterwards: faults cleared, the resolver drains every pending order, and the audit
// (test/support/audit.ts) plus the client's own observations must agree. Exit 1 on any breach.
//
//   npm run chaos                          ~2-3 minutes: 120 s of stream, 12 kills
//   npm run chaos -- --seed 1234           the same decisions again (timing still varies)
//   npm run chaos -- --duration 30 --kills 4 --operations 200 --clients 4
//
// Options (defaults): --seed (random, printed), --duration 120 (seconds of stream at most),
// --operations 100000 (logical operations at most; the stream ends at whichever limit comes
// first), --kills 12 (SIGKILLs of an API process, spread over the stream), --clients 6
// (concurrent client loops), --drain-timeout 120 (seconds for pending orders and emails to
// settle), --no-crash-points (never restart a process with CRASH_AT).
import { parseArgs } from "node:util";
import { CRASH_POINTS } from "../src/shared/crash-points.ts";
import { type AuditResult, auditSystem, formatAudit } from "../test/support/audit.ts";
import {
  type Answer,
  type Cluster,
  createPartner,
  request,
  type ServiceProcess,
  startCluster,
  stopClustersOnExit,
  TransportError,
} from "../test/support/cluster.ts";

export type ChaosOptions = {
  seed: number;
  duration_s: number;
  operations: number;
  kills: number;
  clients: number;
  drain_timeout_s: number;
  crash_points: boolean;
  /** Use this database instead of an embedded PostgreSQL of the cluster's own. */
  databaseUrl?: string;
  /** Run against this cluster (not stopped at the end) instead of starting one. */
  cluster?: Cluster;
  log: (line: string) => void;
};

export const CHAOS_DEFAULTS: Omit<ChaosOptions, "seed" | "log"> = {
  duration_s: 120,
  operations: 100_000,
  kills: 12,
  clients: 6,
  drain_timeout_s: 120,
  crash_points: true,
};

/** Environment of the API processes: short carrier timeout and resolver delay, so a run settles fast. */
export const CHAOS_SERVICE_ENV = {
  CARRIER_TIMEOUT_MS: "1000",
  RESOLVE_AFTER_MS: "1500",
  LOG_LEVEL: "info",
  DB_POOL_MAX: "10",
  // A job locked by a SIGKILLed process is unlocked after this long (src/server/worker.ts), not 4 hours.
  STALE_JOB_AFTER_MS: "6000",
};
/** A slow carrier call (slow@carrier.test, timeout_share) outlives the API's carrier timeout. */
export const CHAOS_SIMULATOR_ENV = { SIMULATOR_SLOW_MS: "2500" };

const RICH_PARTNERS = 4;
const THIN_PARTNERS = 2;
const RICH_CREDIT_MINOR = 10_000_000;
/** A client gives up on one logical operation after this long and leaves it to reconciliation. */
const OPERATION_DEADLINE_MS = 45_000;
const LONG_CLIENT_TIMEOUT_MS = 15_000;
const MAX_WAIT_FOR_LIVE_PROCESS_MS = 60_000;
const END_USER = { phone: "+14155550123", first_name: "Chaos", last_name: "Monkey" };

// ---------------------------------------------------------------------------------------------
// A small seeded PRNG (mulberry32) with one independent stream per actor, so each client loop,
// the killer and the fault changer make the same decisions for the same seed whatever the timing.

export type Rng = {
  next: () => number;
  int: (min: number, max: number) => number;
  chance: (p: number) => boolean;
  pick: <T>(items: readonly T[]) => T;
};

export function createRng(seed: number, stream: string): Rng {
  let state = (seed ^ hashString(stream)) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}

function hashString(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

// ---------------------------------------------------------------------------------------------
// What the run did and saw.

type Final = "completed" | "failed" | "insufficient" | "unresolved";

type Operation = {
  op: number;
  kind: "purchase" | "topup";
  partner: Partner;
  client_reference: string;
  cart_key: string | null;
  idempotency_key: string | null;
  body: Record<string, unknown> | null;
  final: Final;
  /** Every orderID a 200 (or a 502's detail) named for this operation. */
  order_ids: Set<string>;
};

type Partner = {
  name: string;
  partner_id: string;
  api_key: string;
  thin: boolean;
  credit_minor: number;
  iccids: string[];
};

type PackageChoice = { package_id: string; price_minor: number };

export type ChaosStats = {
  requests: Record<string, number>;
  operations: Record<string, number>;
  outcomes: Record<string, number>;
  kills: number;
  restarts: number;
  crash_point_deaths: number;
  armed_restarts: number;
  fault_changes: number;
  retries: number;
  client_timeouts: number;
  duplicate_submits: number;
  replays_checked: number;
  key_reuses_checked: number;
  reconciled: number;
  topups_available: boolean;
  stream_s: number;
  drain_s: number;
};

export type ChaosReport = {
  seed: number;
  options: Omit<ChaosOptions, "log" | "cluster">;
  stats: ChaosStats;
  client_breaches: string[];
  audit: AuditResult;
  passed: boolean;
};

class Run {
  readonly stats: ChaosStats = {
    requests: {},
    operations: {},
    outcomes: {},
    kills: 0,
    restarts: 0,
    crash_point_deaths: 0,
    armed_restarts: 0,
    fault_changes: 0,
    retries: 0,
    client_timeouts: 0,
    duplicate_submits: 0,
    replays_checked: 0,
    key_reuses_checked: 0,
    reconciled: 0,
    topups_available: false,
    stream_s: 0,
    drain_s: 0,
  };
  readonly breaches: string[] = [];
  readonly operations: Operation[] = [];
  readonly partners: Partner[] = [];
  packages: PackageChoice[] = [];
  started_ops = 0;
  stream_started_at = 0;
  streaming = true;
  readonly cluster: Cluster;
  readonly options: ChaosOptions;
  /** Slots whose current process was started with CRASH_AT. */
  readonly armed = new Set<number>();
  /** One restart at a time per slot. */
  readonly slotLocks: Promise<unknown>[] = [];
  stopping = false;

  constructor(cluster: Cluster, options: ChaosOptions) {
    this.cluster = cluster;
    this.options = options;
  }

  count(bucket: Record<string, number>, key: string): void {
    bucket[key] = (bucket[key] ?? 0) + 1;
  }

  breach(message: string): void {
    if (this.breaches.length < 200) this.breaches.push(message);
  }

  progress(): number {
    const elapsed = (Date.now() - this.stream_started_at) / 1000;
    return Math.max(this.started_ops / this.options.operations, elapsed / this.options.duration_s);
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP with retries against whichever API process is alive.

async function liveUrl(run: Run, rng: Rng, avoid: string | null): Promise<string> {
  const deadline = Date.now() + MAX_WAIT_FOR_LIVE_PROCESS_MS;
  for (;;) {
    const urls = run.cluster.liveUrls();
    const preferred = urls.filter((url) => url !== avoid);
    if (preferred.length > 0) return rng.pick(preferred);
    if (urls.length > 0) return urls[0]!;
    if (Date.now() > deadline) throw new Error("no API process came back within a minute");
    await sleep(100);
  }
}

type Sent = { url: string; answer: Answer | null; transport: TransportError | null };

/** One HTTP call to a live process; transport failures are returned, not thrown, and counted. */
async function send(
  run: Run,
  rng: Rng,
  method: string,
  path: string,
  options: {
    key: string;
    body?: unknown;
    headers?: Record<string, string>;
    timeout_ms?: number;
    avoid?: string | null;
  },
): Promise<Sent> {
  const url = await liveUrl(run, rng, options.avoid ?? null);
  try {
    const answer = await request(url, method, path, options);
    run.count(run.stats.requests, String(answer.status));
    if (answer.status >= 500 && answer.status !== 502 && answer.status !== 503) {
      run.breach(
        `${method} ${path} answered ${answer.status} ${answer.body?.code ?? ""} (request ${answer.headers.get("x-request-id")})`,
      );
    }
    return { url, answer, transport: null };
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
    run.count(run.stats.requests, error.kind);
    if (error.kind === "client_timeout") run.stats.client_timeouts += 1;
    return { url, answer: null, transport: error };
  }
}

/** A read or setup call that must eventually answer: retried on transport errors and 5xx. */
async function sendUntilAnswered(
  run: Run,
  rng: Rng,
  method: string,
  path: string,
  options: { key: string; body?: unknown; headers?: Record<string, string> },
): Promise<Answer> {
  let avoid: string | null = null;
  for (let attempt = 0; attempt < 60; attempt++) {
    const sent = await send(run, rng, method, path, { ...options, avoid });
    if (sent.answer && sent.answer.status < 500) return sent.answer;
    avoid = sent.url;
    run.stats.retries += 1;
    await sleep(rng.int(50, 300));
  }
  throw new Error(`${method} ${path} got no answer in 60 attempts`);
}

function retryAfterMs(answer: Answer, rng: Rng): number {
  const seconds = Number(answer.headers.get("retry-after") ?? 1);
  // A careful client honours Retry-After; capped so a short run stays short.
  return Math.min(Number.isFinite(seconds) ? seconds * 1000 : 1000, 1000) * (0.5 + rng.next() / 2);
}

const ORDER_ID = /\bord_[A-Za-z0-9_-]+/;

/**
 * Sends one logical submit (purchase or top-up) until it reaches a final answer or the
 * operation's deadline: 200, 402 and 502 are final; 409, 503 and transport failures are retried
 * with the same cart_key or Idempotency-Key and body, sometimes on the other process.
 */
async function submitUntilFinal(
  run: Run,
  rng: Rng,
  operation: Operation,
  path: string,
  headers: Record<string, string>,
  options: { race: boolean },
): Promise<void> {
  const deadline = Date.now() + OPERATION_DEADLINE_MS;
  let avoid: string | null = null;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    if (attempt > 0) run.stats.retries += 1;
    // Some attempts give up early, often mid-request: the server carries on without the client.
    const timeout_ms = rng.chance(0.3) ? rng.int(20, 1200) : LONG_CLIENT_TIMEOUT_MS;
    const call = (to: string | null) =>
      send(run, rng, "POST", path, {
        key: operation.partner.api_key,
        body: operation.body,
        headers,
        timeout_ms,
        avoid: to,
      });
    let sent: Sent;
    if (options.race && attempt === 0) {
      // The same submit twice at once, likely on both processes: exactly one may act.
      run.stats.duplicate_submits += 1;
      const [first, second] = await Promise.all([call(null), call(null)]);
      for (const other of [second]) if (other.answer) observe(run, operation, other.answer, path);
      sent = first;
    } else {
      sent = await call(avoid);
    }
    if (!sent.answer) {
      avoid = sent.url;
      await sleep(rng.int(50, 300));
      continue;
    }
    const final = observe(run, operation, sent.answer, path);
    if (final) {
      operation.final = final;
      return;
    }
    await sleep(sent.answer.status === 409 ? retryAfterMs(sent.answer, rng) : rng.int(200, 600));
  }
  operation.final = "unresolved";
}

/** Records what one answer says about an operation; returns its final outcome, or null to retry. */
function observe(run: Run, operation: Operation, answer: Answer, path: string): Final | null {
  const what = `${operation.kind} op ${operation.op} (${operation.client_reference})`;
  switch (answer.status) {
    case 200: {
      const order_id = String(answer.body.orderID ?? "");
      if (answer.body.status !== "completed") run.breach(`${what}: 200 with status ${answer.body.status}`);
      if (answer.body.client_reference !== operation.client_reference) {
        run.breach(`${what}: 200 names client_reference ${answer.body.client_reference}`);
      }
      operation.order_ids.add(order_id);
      if (operation.order_ids.size > 1) {
        run.breach(
          `${what}: one operation answered with several orders: ${[...operation.order_ids].join(", ")}`,
        );
      }
      return "completed";
    }
    case 502: {
      if (answer.body.code !== "carrier_error") run.breach(`${what}: 502 with code ${answer.body.code}`);
      const order_id = ORDER_ID.exec(String(answer.body.detail ?? ""))?.[0];
      if (order_id) operation.order_ids.add(order_id);
      return "failed";
    }
    case 402:
      if (answer.body.code !== "insufficient_balance")
        run.breach(`${what}: 402 with code ${answer.body.code}`);
      return "insufficient";
    case 409:
      if (answer.body.code !== "request_in_progress")
        run.breach(`${what}: 409 with code ${answer.body.code}`);
      return null;
    case 503:
      if (answer.body.code !== "carrier_unavailable")
        run.breach(`${what}: 503 with code ${answer.body.code}`);
      return null;
    default:
      run.breach(
        `${what}: POST ${path} answered ${answer.status} ${answer.body?.code ?? ""}: ${answer.body?.detail ?? ""} ` +
          `(request ${answer.headers.get("x-request-id")})`,
      );
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The operations.

function endUserEmail(rng: Rng, op: number): string {
  const roll = rng.next();
  if (roll < 0.08) return "decline@carrier.test";
  if (roll < 0.14) return "slow@carrier.test";
  return `user${op}@example.com`;
}

async function purchase(run: Run, rng: Rng, op: number): Promise<void> {
  const thin = rng.chance(0.15);
  const partner = rng.pick(run.partners.filter((p) => p.thin === thin));
  const pkg = rng.pick(run.packages);
  // A lost 201 makes the client ask again: an unused cart is harmless, a second order is not.
  const cart = await sendUntilAnswered(run, rng, "POST", "/v1/orders/cart", {
    key: partner.api_key,
    body: { package_id: pkg.package_id },
  });
  if (cart.status !== 201) {
    run.breach(`purchase op ${op}: cart answered ${cart.status} ${cart.body.code}`);
    return;
  }
  const client_reference = `chaos-op-${op}`;
  const operation: Operation = {
    op,
    kind: "purchase",
    partner,
    client_reference,
    cart_key: cart.body.cart_key,
    idempotency_key: null,
    body: { cart_key: cart.body.cart_key, email: endUserEmail(rng, op), ...END_USER, client_reference },
    final: "unresolved",
    order_ids: new Set(),
  };
  run.operations.push(operation);
  await submitUntilFinal(run, rng, operation, "/v1/orders/submit", {}, { race: rng.chance(0.15) });
  run.count(run.stats.outcomes, `purchase ${operation.final}`);
  if (operation.final === "completed") {
    const order_id = [...operation.order_ids][0];
    const order = await sendUntilAnswered(run, rng, "GET", `/v1/orders/${order_id}`, {
      key: partner.api_key,
    });
    const iccid = order.body.purchases?.[0]?.iccid;
    if (order.status !== 200 || typeof iccid !== "string") {
      run.breach(`purchase op ${op}: GET /v1/orders/${order_id} answered ${order.status} without an ICCID`);
    } else {
      partner.iccids.push(iccid);
    }
  }
  if (operation.final !== "unresolved" && rng.chance(0.15))
    await replay(run, rng, operation, "/v1/orders/submit", {});
}

async function topUp(run: Run, rng: Rng, op: number): Promise<boolean> {
  const candidates = run.partners.filter((p) => p.iccids.length > 0);
  if (candidates.length === 0) return false;
  const partner = rng.pick(candidates);
  const iccid = rng.pick(partner.iccids);
  const offer = await sendUntilAnswered(run, rng, "GET", `/v1/orders/available-topups/${iccid}`, {
    key: partner.api_key,
  });
  if (offer.status !== 200 || !Array.isArray(offer.body.data)) {
    run.breach(`topup op ${op}: available-topups for ${iccid} answered ${offer.status} ${offer.body.code}`);
    return true;
  }
  if (offer.body.data.length === 0) return false;
  const row = rng.pick(offer.body.data as { package_id: string; external_package_id: string }[]);
  const client_reference = `chaos-op-${op}`;
  const idempotency_key = `chaos-${run.options.seed}-${op}`;
  const operation: Operation = {
    op,
    kind: "topup",
    partner,
    client_reference,
    cart_key: null,
    idempotency_key,
    body: {
      iccid,
      package_id: row.package_id,
      external_package_id: row.external_package_id,
      email: endUserEmail(rng, op),
      ...END_USER,
      client_reference,
    },
    final: "unresolved",
    order_ids: new Set(),
  };
  run.operations.push(operation);
  const headers = { "idempotency-key": idempotency_key };
  await submitUntilFinal(run, rng, operation, "/v1/orders/submit-topup", headers, { race: rng.chance(0.15) });
  run.count(run.stats.outcomes, `topup ${operation.final}`);
  if (operation.final !== "unresolved" && rng.chance(0.2)) {
    await replay(run, rng, operation, "/v1/orders/submit-topup", headers);
  }
  if (rng.chance(0.1)) {
    // The same key with another body is refused, whatever state the first request is in.
    run.stats.key_reuses_checked += 1;
    const reused = await sendUntilAnswered(run, rng, "POST", "/v1/orders/submit-topup", {
      key: partner.api_key,
      body: { ...operation.body, client_reference: `${client_reference}-other` },
      headers,
    });
    if (reused.status !== 422 || reused.body.code !== "idempotency_key_reused") {
      run.breach(
        `topup op ${op}: the key reused with another body answered ${reused.status} ${reused.body.code}`,
      );
    }
  }
  return true;
}

/** Asks again after a final answer: the same outcome and the same order, never a second one. */
async function replay(
  run: Run,
  rng: Rng,
  operation: Operation,
  path: string,
  headers: Record<string, string>,
): Promise<void> {
  run.stats.replays_checked += 1;
  for (let attempt = 0; attempt < 20; attempt++) {
    const sent = await send(run, rng, "POST", path, {
      key: operation.partner.api_key,
      body: operation.body,
      headers,
    });
    if (!sent.answer) continue;
    // A top-up's key stores its 402; a cart does not (spec: it may succeed once funds are freed).
    const insufficient = operation.kind === "topup" ? 402 : null;
    const expected = { completed: 200, failed: 502, insufficient, unresolved: null }[operation.final];
    if (expected === null) return;
    if (sent.answer.status !== expected) {
      run.breach(
        `${operation.kind} op ${operation.op}: answered ${expected} first, ${sent.answer.status} ${sent.answer.body.code ?? ""} on replay`,
      );
    }
    observe(run, operation, sent.answer, path);
    return;
  }
}

async function read(run: Run, rng: Rng): Promise<void> {
  const partner = rng.pick(run.partners);
  const roll = rng.next();
  if (roll < 0.5) {
    const wallet = await sendUntilAnswered(run, rng, "GET", "/v1/profile/wallet", { key: partner.api_key });
    const available = wallet.body.balance?.amount_minor;
    if (wallet.status !== 200 || typeof available !== "number" || available < 0) {
      run.breach(`wallet of ${partner.name} read ${wallet.status} ${JSON.stringify(wallet.body)}`);
    }
  } else {
    const page = await sendUntilAnswered(run, rng, "GET", "/v1/profile/orders?limit=5", {
      key: partner.api_key,
    });
    if (page.status !== 200 || !Array.isArray(page.body.data)) {
      run.breach(`order list of ${partner.name} answered ${page.status}`);
    }
  }
}

async function clientLoop(run: Run, index: number): Promise<void> {
  const rng = createRng(run.options.seed, `client-${index}`);
  while (run.progress() < 1) {
    const op = run.started_ops++;
    if (op >= run.options.operations) return;
    const roll = rng.next();
    if (roll < 0.2) {
      run.count(run.stats.operations, "read");
      await read(run, rng);
    } else if (roll < 0.45 && run.stats.topups_available && (await topUp(run, rng, op))) {
      run.count(run.stats.operations, "topup");
    } else {
      run.count(run.stats.operations, "purchase");
      await purchase(run, rng, op);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The killer, the supervisor and the fault changer.

/** Serialises restarts of one slot: a kill and a supervisor restart never overlap. */
function withSlot<T>(run: Run, slot: number, work: () => Promise<T>): Promise<T> {
  const previous = run.slotLocks[slot] ?? Promise.resolve();
  const next = previous.then(work, work);
  run.slotLocks[slot] = next.catch(() => undefined);
  return next;
}

const START_ATTEMPTS = 3;

async function startSlot(run: Run, slot: number, rng: Rng | null): Promise<void> {
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
function watch(run: Run, slot: number, service: ServiceProcess): void {
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

async function killer(run: Run): Promise<void> {
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

async function faultChanger(run: Run): Promise<void> {
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
    run.stats.fault_changes += 1;
    // An outage is short; other weather lasts a few seconds.
    const hold_ms = settings.down ? rng.int(800, 2000) : rng.int(2000, 5000);
    const until = Date.now() + hold_ms;
    while (run.streaming && Date.now() < until) await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// Setup, drain, reconciliation.

async function setup(run: Run): Promise<void> {
  const url = run.cluster.liveUrls()[0]!;
  for (let i = 0; i < RICH_PARTNERS + THIN_PARTNERS; i++) {
    const thin = i >= RICH_PARTNERS;
    const name = `chaos-${thin ? "thin" : "rich"}-${i}`;
    // Thin wallets are topped up after discovery, once prices are known.
    const created = await createPartner(url, name, thin ? 0 : RICH_CREDIT_MINOR);
    run.partners.push({ name, ...created, thin, credit_minor: thin ? 0 : RICH_CREDIT_MINOR, iccids: [] });
  }
  const key = run.partners[0]!.api_key;
  for (const code of ["FR", "DE", "JP", "US"]) {
    const found = await request(url, "GET", `/v1/esim/destination/${code}/packages`, { key });
    if (found.status !== 200) throw new Error(`discovery ${code}: ${found.status}`);
    for (const pkg of found.body.data as {
      package_id: string;
      data_mb: number | null;
      wholesale_price: { amount_minor: number };
    }[]) {
      if (pkg.data_mb !== null && pkg.data_mb <= 5_000) {
        run.packages.push({ package_id: pkg.package_id, price_minor: pkg.wholesale_price.amount_minor });
      }
    }
  }
  if (run.packages.length === 0) throw new Error("discovery found no metered packages");
  const cheapest = Math.min(...run.packages.map((p) => p.price_minor));
  for (const partner of run.partners.filter((p) => p.thin)) {
    // Room for about three purchases: then 402s, and a race between concurrent holds.
    partner.credit_minor = cheapest * 3 + 1;
    const credited = await request(url, "POST", `/admin/partners/${partner.partner_id}/wallet/credits`, {
      headers: { authorization: `Bearer ${run.cluster.env.ADMIN_TOKEN}` },
      body: { amount_minor: partner.credit_minor, reference: `seed-${partner.partner_id}` },
    });
    if (credited.status !== 201) throw new Error(`credit ${partner.name}: ${credited.status}`);
  }
  // Top-ups are in the stream when the service offers the route (a 400, not a 404 not_found).
  const probe = await request(url, "POST", "/v1/orders/submit-topup", { key, body: {} });
  run.stats.topups_available = !(probe.status === 404 && probe.body.code === "not_found");
}

async function drain(run: Run): Promise<void> {
  const { cluster } = run;
  await cluster.simulator.control({
    latency_ms: 0,
    refuse_share: 0,
    timeout_share: 0,
    fail_share: 0,
    down: false,
  });
  // Processes armed with a crash point would die on the resolver's next purchase: start them clean.
  for (let slot = 0; slot < cluster.services.length; slot++) {
    await withSlot(run, slot, async () => {
      if (run.armed.has(slot) || cluster.services[slot] === null) await startSlot(run, slot, null);
    });
  }
  const started = Date.now();
  const deadline = started + run.options.drain_timeout_s * 1000;
  let last_log = 0;
  for (;;) {
    const state = await cluster.pool.query<{
      pending: number;
      emails: number;
      esims: number;
      delivered: number;
    }>(`
      select (select count(*) from orders where status = 'pending')::int as pending,
             (select count(*) from graphile_worker.jobs where task_identifier = 'send_confirmation_email')::int as emails,
             (select count(*) from orders where type = 'esim' and status = 'completed')::int as esims,
             (select count(*) from email_deliveries)::int as delivered`);
    const { pending, emails, esims, delivered } = state.rows[0]!;
    const settled =
      pending === 0 && emails === 0 && delivered >= esims && cluster.smtp.messages.length >= esims;
    if (settled) break;
    if (Date.now() - last_log > 5_000) {
      run.options.log(
        `  draining: ${pending} pending orders, ${emails} email jobs queued, ${delivered}/${esims} emails delivered`,
      );
      last_log = Date.now();
    }
    if (Date.now() > deadline) {
      run.options.log(
        `  drain timed out after ${run.options.drain_timeout_s} s; the audit will say what is left`,
      );
      await describeStuckJobs(run);
      break;
    }
    await sleep(500);
  }
  run.stats.drain_s = Math.round((Date.now() - started) / 100) / 10;
}

/** The jobs still queued after a drain timed out, for the report: why is something not done? */
async function describeStuckJobs(run: Run): Promise<void> {
  const jobs = await run.cluster.pool.query<{
    task_identifier: string;
    payload: unknown;
    attempts: number;
    max_attempts: number;
    locked_by: string | null;
    locked_at: Date | null;
    run_at: Date;
    last_error: string | null;
  }>(`
    select task_identifier, key as payload, attempts, max_attempts, locked_by, locked_at, run_at, last_error
    from graphile_worker.jobs order by run_at limit 20`);
  for (const job of jobs.rows) {
    run.options.log(
      `  stuck job ${job.task_identifier} ${JSON.stringify(job.payload)}: attempts ${job.attempts}/${job.max_attempts}, ` +
        `${job.locked_by ? `locked by ${job.locked_by} since ${job.locked_at?.toISOString()}` : "not locked"}, ` +
        `run_at ${job.run_at.toISOString()}${job.last_error ? `, last error ${job.last_error.split("\n")[0]}` : ""}`,
    );
  }
}

/** Learns the outcome of operations the client gave up on, and replays a sample of the others. */
async function reconcile(run: Run): Promise<void> {
  const rng = createRng(run.options.seed, "reconcile");
  for (const operation of run.operations) {
    if (operation.final !== "unresolved") continue;
    run.stats.reconciled += 1;
    const path = operation.kind === "purchase" ? "/v1/orders/submit" : "/v1/orders/submit-topup";
    const headers: Record<string, string> =
      operation.idempotency_key === null ? {} : { "idempotency-key": operation.idempotency_key };
    const sent = await send(run, rng, "POST", path, {
      key: operation.partner.api_key,
      body: operation.body,
      headers,
    });
    const final = sent.answer ? observe(run, operation, sent.answer, path) : null;
    if (final) operation.final = final;
    else run.breach(`${operation.kind} op ${operation.op}: still no final answer after the drain`);
  }
}

/** What every client was told must be what the books say. */
async function crossCheck(run: Run): Promise<void> {
  const orders = await run.cluster.pool.query<{
    order_id: string;
    partner_id: string;
    status: string;
    client_reference: string | null;
    total_minor: number;
  }>("select order_id, partner_id, status, client_reference, total_minor from orders");
  const byReference = new Map<string, typeof orders.rows>();
  for (const order of orders.rows) {
    const key = `${order.partner_id} ${order.client_reference}`;
    byReference.set(key, [...(byReference.get(key) ?? []), order]);
  }
  for (const operation of run.operations) {
    const what = `${operation.kind} op ${operation.op} (${operation.client_reference})`;
    const found = byReference.get(`${operation.partner.partner_id} ${operation.client_reference}`) ?? [];
    const told = [...operation.order_ids];
    if (operation.final === "insufficient") {
      if (found.length > 0)
        run.breach(`${what}: told 402 but order ${found[0]!.order_id} exists (${found[0]!.status})`);
      continue;
    }
    if (operation.final === "unresolved") continue; // reported by reconcile
    const order = found[0];
    if (!order) {
      run.breach(`${what}: told ${operation.final} (${told.join(", ")}) but no order exists`);
      continue;
    }
    if (order.status !== operation.final)
      run.breach(`${what}: told ${operation.final} but order ${order.order_id} is ${order.status}`);
    if (told.length > 0 && !told.includes(order.order_id)) {
      run.breach(`${what}: told order ${told.join(", ")} but the books have ${order.order_id}`);
    }
  }
  // Each wallet, as the API shows it: credit minus completed orders, nothing held.
  const rng = createRng(run.options.seed, "cross-check");
  for (const partner of run.partners) {
    const spent = orders.rows
      .filter((o) => o.partner_id === partner.partner_id && o.status === "completed")
      .reduce((sum, o) => sum + o.total_minor, 0);
    const wallet = await sendUntilAnswered(run, rng, "GET", "/v1/profile/wallet", { key: partner.api_key });
    const available = wallet.body.balance?.amount_minor;
    const pending = wallet.body.pending?.amount_minor;
    if (available !== partner.credit_minor - spent || pending !== 0) {
      run.breach(
        `wallet of ${partner.name}: shows ${available} available and ${pending} pending, expected ` +
          `${partner.credit_minor - spent} (credited ${partner.credit_minor}, completed orders ${spent}) and 0`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log;
  log(`chaos: seed ${options.seed} (rerun with --seed ${options.seed})`);
  log(
    `chaos: ${options.duration_s} s or ${options.operations} operations, ${options.kills} kills, ` +
      `${options.clients} clients, crash points ${options.crash_points ? "on" : "off"}`,
  );
  const cluster =
    options.cluster ??
    (await startCluster({
      services: 2,
      databaseUrl: options.databaseUrl,
      env: CHAOS_SERVICE_ENV,
      simulatorEnv: CHAOS_SIMULATOR_ENV,
      log: (message) => log(`  ${message}`),
    }));
  const run = new Run(cluster, options);
  try {
    // Adopt the processes the cluster started, so a death of theirs is noticed too.
    cluster.services.forEach((service, slot) => {
      if (service) watch(run, slot, service);
    });
    await setup(run);
    log(
      `chaos: ${run.partners.length} partners (${THIN_PARTNERS} with thin wallets), ${run.packages.length} packages, ` +
        `top-ups ${run.stats.topups_available ? "in the stream" : "not offered by this build: purchases only"}`,
    );

    run.stream_started_at = Date.now();
    const faults = faultChanger(run);
    const kills = killer(run);
    await Promise.all(Array.from({ length: options.clients }, (_, i) => clientLoop(run, i)));
    await kills;
    run.streaming = false;
    await faults;
    run.stats.stream_s = Math.round((Date.now() - run.stream_started_at) / 100) / 10;
    log(`chaos: stream done in ${run.stats.stream_s} s; clearing faults and draining`);

    await drain(run);
    await reconcile(run);
    await crossCheck(run);
    const audit = await auditSystem({
      pool: cluster.pool,
      simulator: cluster.simulator,
      smtp: cluster.smtp,
      uniqueClientReferences: true,
    });
    const { cluster: _cluster, log: _log, ...printable } = options;
    return {
      seed: options.seed,
      options: printable,
      stats: run.stats,
      client_breaches: run.breaches,
      audit,
      passed: audit.breaches.length === 0 && run.breaches.length === 0,
    };
  } finally {
    run.stopping = true;
    if (!options.cluster) await cluster.stop();
  }
}

export function formatChaosReport(report: ChaosReport): string {
  const s = report.stats;
  const line = (record: Record<string, number>) =>
    Object.entries(record)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ");
  return [
    `chaos summary (seed ${report.seed})`,
    `  stream ${s.stream_s} s, drain ${s.drain_s} s; top-ups ${s.topups_available ? "included" : "not available"}`,
    `  operations: ${line(s.operations)}`,
    `  outcomes: ${line(s.outcomes)}`,
    `  requests by outcome: ${line(s.requests)}`,
    `  kills ${s.kills} (SIGKILL), restarts ${s.restarts} (${s.armed_restarts} armed with a crash point), ` +
      `deaths at crash points ${s.crash_point_deaths}`,
    `  retries ${s.retries}, client timeouts ${s.client_timeouts}, racing duplicate submits ${s.duplicate_submits}, ` +
      `replays checked ${s.replays_checked}, key reuses checked ${s.key_reuses_checked}, reconciled after drain ${s.reconciled}`,
    `  carrier fault changes ${s.fault_changes}`,
    formatAudit(report.audit),
    `client-side checks: ${report.client_breaches.length === 0 ? "PASS" : `FAIL (${report.client_breaches.length})`}`,
    ...report.client_breaches.map((breach) => `  BREACH ${breach}`),
    report.passed ? "CHAOS PASSED" : "CHAOS FAILED",
  ].join("\n");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`--${name}: expected a whole number, got ${raw}`);
  return value;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      duration: { type: "string" },
      operations: { type: "string" },
      kills: { type: "string" },
      clients: { type: "string" },
      "drain-timeout": { type: "string" },
      "no-crash-points": { type: "boolean" },
    },
  });
  const options: ChaosOptions = {
    seed: positive("seed", values.seed, Math.floor(Math.random() * 2 ** 31)),
    duration_s: positive("duration", values.duration, CHAOS_DEFAULTS.duration_s),
    operations: positive("operations", values.operations, CHAOS_DEFAULTS.operations),
    kills: positive("kills", values.kills, CHAOS_DEFAULTS.kills),
    clients: Math.max(1, positive("clients", values.clients, CHAOS_DEFAULTS.clients)),
    drain_timeout_s: positive("drain-timeout", values["drain-timeout"], CHAOS_DEFAULTS.drain_timeout_s),
    crash_points: values["no-crash-points"] !== true,
    log: (line) => console.log(line),
  };
  const report = await runChaos(options);
  console.log(formatChaosReport(report));
  return report.passed ? 0 : 1;
}

if (import.meta.main) {
  stopClustersOnExit();
  process.exitCode = await main();
}

// Fault injection and tunable limits for one fake process, set through POST /control (README
// "Faults"). In memory on purpose: faults belong to the network and the moment, not to Airalo's
// records, which live in PostgreSQL.
import { type Static, Type } from "typebox";

/** The calls a fault can be aimed at (README "Faults"); "any" matches every one of them. */
export const OPERATIONS = [
  "token",
  "packages",
  "order",
  "order_async",
  "topup",
  "sim",
  "usage",
  "sim_topups",
  "sim_packages",
  "orders_list",
  "order_get",
  "refund",
  "notifications",
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Rate-limited families, documented defaults in rate-limit.ts. */
export const LIMITED = [
  "token",
  "packages",
  "usage_per_iccid",
  "usage_per_company",
  "sim_packages",
  "refund",
  "simulator_webhook",
] as const;
export type Limited = (typeof LIMITED)[number];
export type Limit = { limit: number; window_ms: number };

const MAX_DELAY_MS = 600_000;

const ArmedFaultSchema = Type.Object(
  {
    operation: Type.Union([...OPERATIONS, "any"].map((name) => Type.Literal(name))),
    /**
     * commit_then_500: do the work, answer 500. drop_after_commit: do the work, destroy the socket.
     * drop: destroy the socket, nothing done. delay: sleep delay_ms, then do the work.
     * error: answer the business error `code` (422 {code, reason}). status: answer `status` with
     * `body` (or the default 5xx body), nothing done.
     */
    kind: Type.Union(
      ["commit_then_500", "drop_after_commit", "drop", "delay", "error", "status"].map((kind) =>
        Type.Literal(kind),
      ),
    ),
    /** How many matching calls it hits (default 1). */
    times: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
    code: Type.Optional(Type.Union([11, 13, 14, 23, 33, 34, 43, 53, 73].map((code) => Type.Literal(code)))),
    additional: Type.Optional(Type.String({ maxLength: 500 })),
    status: Type.Optional(Type.Integer({ minimum: 200, maximum: 599 })),
    body: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type ArmedFault = Static<typeof ArmedFaultSchema>;

const LimitSchema = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    window_ms: Type.Integer({ minimum: 1, maximum: 86_400_000 }),
  },
  { additionalProperties: false },
);

export const ControlPatch = Type.Object(
  {
    /** Added to every Airalo call. */
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
    /** How long a usage answer is served from the cache (Airalo: 20 minutes). */
    usage_cache_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000 })),
    /** Replaces the given families' limits. */
    rate_limits: Type.Optional(
      Type.Partial(Type.Record(Type.Union(LIMITED.map((name) => Type.Literal(name))), LimitSchema)),
    ),
    /** Forget the calls counted so far (every family). */
    reset_rate_limits: Type.Optional(Type.Boolean()),
    /** Appended to the armed faults; each hits the next `times` matching calls, in order. */
    arm: Type.Optional(Type.Array(ArmedFaultSchema, { maxItems: 100 })),
    /** Drop every armed fault (applied before `arm`). */
    disarm: Type.Optional(Type.Boolean()),
    /** Where webhooks go when nothing is opted in for their type (null: nowhere). */
    webhook_url: Type.Optional(
      Type.Union([Type.Null(), Type.String({ pattern: "^https?://", maxLength: 2000 })]),
    ),
    /** eSIMs left per package id (null: no limit again); an order for more gets the quantity 422. */
    stock: Type.Optional(
      Type.Record(
        Type.String({ maxLength: 200 }),
        Type.Union([Type.Null(), Type.Integer({ minimum: 0, maximum: 1_000_000 })]),
      ),
    ),
  },
  { additionalProperties: false },
);
export type ControlPatch = Static<typeof ControlPatch>;

export type FaultSettings = {
  latency_ms: number;
  usage_cache_ms: number;
  rate_limits: Record<Limited, Limit>;
  armed: (ArmedFault & { times: number })[];
  webhook_url: string | null;
  /** eSIMs left per package id; a package not named has no limit. */
  stock: Record<string, number>;
};

export function patchSettings(current: FaultSettings, patch: ControlPatch): FaultSettings {
  const next: FaultSettings = {
    ...current,
    rate_limits: { ...current.rate_limits, ...(patch.rate_limits as Partial<Record<Limited, Limit>>) },
    armed: patch.disarm ? [] : [...current.armed],
  };
  if (patch.latency_ms !== undefined) next.latency_ms = patch.latency_ms;
  if (patch.usage_cache_ms !== undefined) next.usage_cache_ms = patch.usage_cache_ms;
  if (patch.webhook_url !== undefined) next.webhook_url = patch.webhook_url;
  for (const fault of patch.arm ?? []) next.armed.push({ ...fault, times: fault.times ?? 1 });
  next.stock = { ...current.stock };
  for (const [id, left] of Object.entries(patch.stock ?? {})) {
    if (left === null) delete next.stock[id];
    else next.stock[id] = left;
  }
  return next;
}

/** The first armed fault aimed at `operation`, used up by one; null when none is armed. */
export function takeFault(settings: FaultSettings, operation: Operation): ArmedFault | null {
  const index = settings.armed.findIndex(
    (fault) => fault.operation === operation || fault.operation === "any",
  );
  if (index < 0) return null;
  const fault = settings.armed[index]!;
  fault.times -= 1;
  if (fault.times <= 0) settings.armed.splice(index, 1);
  return fault;
}

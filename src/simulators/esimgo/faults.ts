// Fault injection and the rate limiter, per process and in memory: faults are a property of the
// network and the moment, not of the platform's records. Set through POST /sandbox/control.
import { type Static, Type } from "typebox";

/**
 * One armed fault, used by the next `times` API calls that match `method` and `path` (a prefix of
 * the path after /v2.4, e.g. "/orders"; absent: any call):
 *   error             answer `status` with `{message}` (the documented text by default), doing nothing
 *   delay             sleep `delay_ms`, then do the call normally
 *   drop              destroy the connection before doing anything
 *   commit_then_500   do the call (the order is made and committed), then answer 500
 *   drop_after_commit do the call, then destroy the connection instead of answering
 */
export const FaultRule = Type.Object(
  {
    kind: Type.Union([
      Type.Literal("error"),
      Type.Literal("delay"),
      Type.Literal("drop"),
      Type.Literal("commit_then_500"),
      Type.Literal("drop_after_commit"),
    ]),
    method: Type.Optional(Type.String({ pattern: "^[A-Z]{3,7}$" })),
    path: Type.Optional(Type.String({ pattern: "^/", maxLength: 200 })),
    status: Type.Optional(Type.Integer({ minimum: 400, maximum: 599 })),
    message: Type.Optional(Type.String({ maxLength: 500 })),
    delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    times: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000 })),
  },
  { additionalProperties: false },
);
export type FaultRule = Static<typeof FaultRule>;

export const ControlPatch = Type.Object(
  {
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    rate_limit_per_second: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    async_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
    callback_url: Type.Optional(
      Type.Union([Type.String({ pattern: "^https?://", maxLength: 2000 }), Type.Null()]),
    ),
    signature_encoding: Type.Optional(Type.Union([Type.Literal("base64"), Type.Literal("hex")])),
    /** Appended to the armed faults. */
    faults: Type.Optional(Type.Array(FaultRule, { maxItems: 100 })),
    /** Disarms every armed fault first. */
    clear_faults: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ControlPatch = Static<typeof ControlPatch>;

export type CallbackSettings = { callback_url: string | null; signature_encoding: "base64" | "hex" };

export type Settings = {
  latency_ms: number;
  rate_limit_per_second: number;
  /** How long an order of more than 5 bundles stays "processing". */
  async_ms: number;
} & CallbackSettings;

type Armed = FaultRule & { left: number };

export class FaultState {
  settings: Settings;
  #armed: Armed[] = [];

  constructor(settings: Settings) {
    this.settings = settings;
  }

  apply(patch: ControlPatch): void {
    if (patch.clear_faults) this.#armed = [];
    const { faults, clear_faults: _, ...rest } = patch;
    const defined = Object.entries(rest).filter(([, value]) => value !== undefined);
    this.settings = { ...this.settings, ...Object.fromEntries(defined) };
    for (const rule of faults ?? []) this.#armed.push({ ...rule, left: rule.times ?? 1 });
  }

  describe() {
    return { ...this.settings, faults: this.#armed.map(({ left, ...rule }) => ({ ...rule, times: left })) };
  }

  /** The first armed fault matching this call, used up by it. */
  take(method: string, path: string): FaultRule | null {
    const index = this.#armed.findIndex(
      (rule) => (!rule.method || rule.method === method) && (!rule.path || path.startsWith(rule.path)),
    );
    if (index < 0) return null;
    const rule = this.#armed[index]!;
    if (--rule.left <= 0) this.#armed.splice(index, 1);
    return rule;
  }
}

/**
 * "Rate limits per IP address using a fixed window algorithm. The default limit is 10 requests per
 * second" ([DOC:guides/rate_limits/]). Windows are whole seconds; each call costs `cost` tokens.
 */
export class RateLimiter {
  #window_start = 0;
  #used = new Map<string, number>();
  /** Bounds the memory of one window: beyond it, new addresses share one bucket. */
  static readonly MAX_ADDRESSES = 10_000;

  take(address: string, cost: number, limit: number, now_ms = Date.now()) {
    const window_start = now_ms - (now_ms % 1000);
    if (window_start !== this.#window_start) {
      this.#window_start = window_start;
      this.#used.clear();
    }
    const key = this.#used.size >= RateLimiter.MAX_ADDRESSES && !this.#used.has(address) ? "*" : address;
    const used = this.#used.get(key) ?? 0;
    const allowed = used + cost <= limit;
    if (allowed) this.#used.set(key, used + cost);
    return {
      allowed,
      headers: {
        "x-ratelimit-limit": String(limit),
        "x-ratelimit-remaining": String(Math.max(0, limit - (allowed ? used + cost : used))),
        "x-ratelimit-reset": new Date(window_start + 1000).toISOString(),
        "x-ratelimit-cost": String(cost),
      },
    };
  }
}

/** The documented meaning of each status, the default message of an injected error. */
export const DOCUMENTED_MESSAGES: Record<number, string> = {
  400: "Bad Request - returned when request format is not accepted",
  401: "Unauthorised",
  403: "Unauthorised - returned when the api token is invalid",
  404: "Not Found",
  410: "Gone",
  429: "Rate limit exceeded",
  500: "Server Error",
  503: "Processing - Please come back later or use the Retry-After (seconds) header",
};

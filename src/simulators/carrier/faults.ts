// Fault injection for one simulator process, set through POST /control. Kept in memory on
// purpose: faults are a property of the network and the moment, not of the carrier's records.
import { type Static, Type } from "typebox";

export type CallbackSettings = {
  /** Where signals go (the service's POST /carrier/callbacks); null: nothing is pushed. */
  callback_url: string | null;
  callback_token: string | null;
  /** Added before every delivery. */
  callback_latency_ms: number;
  /** Share (0..1) of signals delivered twice. */
  callback_duplicate_share: number;
  /** Share (0..1) of signals held back `callback_reorder_ms` longer, so later ones arrive first. */
  callback_reorder_share: number;
  callback_reorder_ms: number;
};

export type FaultSettings = {
  /** Added to every carrier call (POST /profiles, POST /topups). */
  latency_ms: number;
  /** How long a "timeout" call (timeout_share, slow@carrier.test) sleeps before doing its work. */
  slow_ms: number;
  /** Share (0..1) of new references refused with 422. A known reference keeps its answer. */
  refuse_share: number;
  /** Share (0..1) of calls that sleep slow_ms and then do the work anyway, like a slow carrier. */
  timeout_share: number;
  /** Share (0..1) of calls answered 503 without doing anything. */
  fail_share: number;
  /** Every carrier call answers 503. */
  down: boolean;
} & CallbackSettings;

const MAX_DELAY_MS = 600_000;
const share = () => Type.Optional(Type.Number({ minimum: 0, maximum: 1 }));

export const FaultSettingsPatch = Type.Object(
  {
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
    slow_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
    refuse_share: share(),
    timeout_share: share(),
    fail_share: share(),
    down: Type.Optional(Type.Boolean()),
    callback_url: Type.Optional(
      Type.Union([Type.String({ pattern: "^https?://", maxLength: 2000 }), Type.Null()]),
    ),
    callback_token: Type.Optional(Type.Union([Type.String({ minLength: 8, maxLength: 500 }), Type.Null()])),
    callback_latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
    callback_duplicate_share: share(),
    callback_reorder_share: share(),
    callback_reorder_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_DELAY_MS })),
  },
  { additionalProperties: false },
);
export type FaultSettingsPatch = Static<typeof FaultSettingsPatch>;

export function initialFaults(
  latency_ms: number,
  slow_ms: number,
  callback: { url: string | null; token: string | null } = { url: null, token: null },
): FaultSettings {
  assertDelay("latency_ms", latency_ms);
  assertDelay("slow_ms", slow_ms);
  return {
    latency_ms,
    slow_ms,
    refuse_share: 0,
    timeout_share: 0,
    fail_share: 0,
    down: false,
    callback_url: callback.url,
    callback_token: callback.token,
    callback_latency_ms: 0,
    callback_duplicate_share: 0,
    callback_reorder_share: 0,
    callback_reorder_ms: 1_000,
  };
}

/** Only the fields present change, so a test can flip one fault without restating the rest. */
export function patchFaults(current: FaultSettings, patch: FaultSettingsPatch): FaultSettings {
  const defined = Object.entries(patch).filter(([, value]) => value !== undefined);
  return { ...current, ...Object.fromEntries(defined) } as FaultSettings;
}

/** True for a `share` of calls; exactly never at 0 and always at 1. */
export function roll(share: number): boolean {
  return share > 0 && Math.random() < share;
}

function assertDelay(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > MAX_DELAY_MS) {
    throw new Error(`${name} must be a whole number from 0 to ${MAX_DELAY_MS}, got ${value}`);
  }
}

// Fault injection for one simulator process, set through POST /control. Kept in memory on
// purpose: faults are a property of the network and the moment, not of the carrier's records.
import { type Static, Type } from "typebox";

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
};

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
  },
  { additionalProperties: false },
);
export type FaultSettingsPatch = Static<typeof FaultSettingsPatch>;

export function initialFaults(latency_ms: number, slow_ms: number): FaultSettings {
  assertDelay("latency_ms", latency_ms);
  assertDelay("slow_ms", slow_ms);
  return { latency_ms, slow_ms, refuse_share: 0, timeout_share: 0, fail_share: 0, down: false };
}

/** Only the fields present change, so a test can flip one fault without restating the rest. */
export function patchFaults(current: FaultSettings, patch: FaultSettingsPatch): FaultSettings {
  const next = { ...current };
  if (patch.latency_ms !== undefined) next.latency_ms = patch.latency_ms;
  if (patch.slow_ms !== undefined) next.slow_ms = patch.slow_ms;
  if (patch.refuse_share !== undefined) next.refuse_share = patch.refuse_share;
  if (patch.timeout_share !== undefined) next.timeout_share = patch.timeout_share;
  if (patch.fail_share !== undefined) next.fail_share = patch.fail_share;
  if (patch.down !== undefined) next.down = patch.down;
  return next;
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

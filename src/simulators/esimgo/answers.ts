// What a handler answers: a status, a body, and the headers eSIM Go sends with it. Errors are
// always `{"message": "..."}` ([DOC:guides/rate_limits/]: "All error responses use the same JSON
// structure").
import type pg from "pg";
import type { FaultState } from "./faults.ts";

export type Answer = {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
};

export type FakeContext = {
  pool: pg.Pool;
  faults: FaultState;
  /** Pushes callbacks after a change committed (never awaited). */
  notify: (events: CallbackEvent[]) => void;
};

/** A V3 usage callback's body ([DOC:api/v2_4/operations/your-usage-callback-url/post]). */
export type CallbackEvent = {
  iccid: string;
  alertType: "Utilisation" | "FirstUse";
  bundle: {
    id: string;
    reference: string;
    name: string;
    description: string;
    initialQuantity: number;
    remainingQuantity: number;
    startTime: string | null;
    endTime: string | null;
    unlimited: boolean;
  };
};

export const ok = (body: unknown, headers?: Record<string, string>): Answer => ({
  status: 200,
  body,
  headers,
});

export const failure = (status: number, message: string, headers?: Record<string, string>): Answer => ({
  status,
  body: { message },
  headers,
});

/** Money is kept in minor units; the wire carries decimal amounts in the organisation's currency. */
export const amount = (cents: number | string): number => Number(cents) / 100;

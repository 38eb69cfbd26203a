// What a simulated carrier call can answer, and the sandbox magic values that choose the answer.
import type pg from "pg";
import { type FaultSettings, roll } from "./faults.ts";

export type SimulatorAnswer =
  | { status: 200; body: object }
  | { status: 400; body: { error: "bad_request"; message: string } }
  | { status: 404; body: { error: "not_found" } }
  | { status: 422; body: { error: "refused"; reason: string } }
  | { status: 503; body: { error: "unavailable"; reason: string } };

/** What a use case needs from the running simulator. */
export type SimulatorContext = {
  pool: pg.Pool;
  /** Read at the moment of use: POST /control may change the faults while a call sleeps. */
  faults: () => FaultSettings;
  /** Rejects when the simulator closes, so a sleeping call never holds shutdown up. */
  sleep: (ms: number) => Promise<void>;
  /** Pushes the eSIM's current state to the service after a change committed (never awaited). */
  signal: (iccid: string) => void;
};

export const ok = (body: object): SimulatorAnswer => ({ status: 200, body });
export const badRequest = (message: string): SimulatorAnswer => ({
  status: 400,
  body: { error: "bad_request", message },
});
export const refused = (reason: string): SimulatorAnswer => ({
  status: 422,
  body: { error: "refused", reason },
});
export const unavailable = (reason: string): SimulatorAnswer => ({
  status: 503,
  body: { error: "unavailable", reason },
});

export const DECLINED_REASON = "declined by carrier (sandbox magic value)";
export const RANDOM_REFUSAL_REASON = "refused by carrier (injected: refuse_share)";

/** The end-user emails that steer the sandbox carrier; documented in ./README.md. */
const MAGIC_EMAILS = {
  "decline@carrier.test": "decline",
  "slow@carrier.test": "slow",
  "unavailable@carrier.test": "unavailable",
} as const;

export type MagicValue = (typeof MAGIC_EMAILS)[keyof typeof MAGIC_EMAILS];

export function magicValue(end_user_email: string): MagicValue | null {
  const email = end_user_email.trim().toLowerCase();
  return Object.hasOwn(MAGIC_EMAILS, email) ? MAGIC_EMAILS[email as keyof typeof MAGIC_EMAILS] : null;
}

/**
 * What the end user's email and the injected faults decide before any work is done, shared by
 * provisioning and top-ups: an immediate 503, or the refusal reason (null: go ahead). A slow
 * magic value sleeps first, so the caller's timeout fires while nothing is recorded yet.
 */
export async function sandboxPrelude(
  context: SimulatorContext,
  end_user_email: string,
): Promise<{ answer: SimulatorAnswer } | { refusal: string | null }> {
  const magic = magicValue(end_user_email);
  if (magic === "unavailable") return { answer: unavailable("carrier unavailable (sandbox magic value)") };
  if (magic === "slow") await context.sleep(context.faults().slow_ms);
  if (magic === "decline") return { refusal: DECLINED_REASON };
  return { refusal: roll(context.faults().refuse_share) ? RANDOM_REFUSAL_REASON : null };
}

// The contract's retry schedule: after a failed attempt, the next one waits the step for the attempts
// made so far; after the last step the delivery is `failed`. Eight attempts in all, about 28 hours.
export const RETRY_DELAYS_S = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;

/** An endpoint whose every attempt failed for this long is disabled (contract: 5 days). */
export const DISABLE_AFTER_FAILING_S = 5 * 86_400;

/**
 * Milliseconds until the next attempt after `attempts` failed ones, or null when none is left.
 * `first_retry_delay_ms` replaces the first step (5 s; shorter in tests, WEBHOOK_FIRST_RETRY_DELAY_MS).
 */
export function retryDelayMs(attempts: number, first_retry_delay_ms: number): number | null {
  if (attempts < 1) throw new Error(`retryDelayMs: attempts ${attempts} < 1`);
  if (attempts > RETRY_DELAYS_S.length) return null;
  return attempts === 1 ? first_retry_delay_ms : RETRY_DELAYS_S[attempts - 1]! * 1000;
}

// What the soak run measures: latencies and outcomes, per window and for the whole run.

export class Meter {
  /** Latencies (ms) and outcomes of the current window and of the whole run. */
  window: number[] = [];
  all: number[] = [];
  byKind = new Map<string, number[]>();
  statuses = new Map<string, number>();
  errors = new Map<string, number>();
  windowErrors = 0;
  skipped = 0;
  total = 0;

  record(kind: string, latency_ms: number, outcome: string, error: boolean): void {
    this.total += 1;
    this.window.push(latency_ms);
    this.all.push(latency_ms);
    const list = this.byKind.get(kind) ?? [];
    list.push(latency_ms);
    this.byKind.set(kind, list);
    this.statuses.set(outcome, (this.statuses.get(outcome) ?? 0) + 1);
    if (error) {
      this.windowErrors += 1;
      const key = `${kind} ${outcome}`;
      this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
    }
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One call, timed and counted; expected statuses are the only non-errors. */

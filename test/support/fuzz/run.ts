// A fuzz run: the sweep and the random plans, sent one by one, failures grouped by symptom.
import fc from "fast-check";
import { ResponseChecker } from "./checker.ts";
import { executePlan, type FuzzReport, type Outcome } from "./execute.ts";
import { EXAMPLES_PER_FAILURE } from "./limits.ts";
import type { FuzzEnvironment } from "./state.ts";
import { planArbitrary, sweepPlans } from "./sweep.ts";

export async function runFuzz(
  env: FuzzEnvironment,
  options: { seed: number; runs: number; onProgress?: (done: number, outcome: Outcome) => void },
): Promise<FuzzReport> {
  const started = Date.now();
  const checker = new ResponseChecker(env.operations);
  // The sweep first (a few dozen requests, the same every run), then the random requests.
  const sweep = sweepPlans(env.operations, options.seed);
  const plans = [
    ...sweep,
    ...fc.sample(planArbitrary(env.operations), { seed: options.seed, numRuns: options.runs }),
  ];
  const report: FuzzReport = {
    seed: options.seed,
    runs: options.runs,
    sweep: sweep.length,
    duration_ms: 0,
    byRoute: {},
    byMutation: {},
    failures: [],
    succeeded: [],
  };
  const failures = new Map<string, { key: string; count: number; examples: Outcome[] }>();
  const succeeded = new Set<string>();
  for (const [index, plan] of plans.entries()) {
    const outcome = await executePlan(env, checker, plan, index);
    const routeKey = outcome.route ?? `(unrouted: ${plan.op.id})`;
    const statuses = report.byRoute[routeKey] ?? {};
    report.byRoute[routeKey] = statuses;
    statuses[String(outcome.status)] = (statuses[String(outcome.status)] ?? 0) + 1;
    const mutation = outcome.mutation.startsWith("auth_") ? "bad_auth" : outcome.mutation;
    report.byMutation[mutation] = (report.byMutation[mutation] ?? 0) + 1;
    if (outcome.status >= 200 && outcome.status < 300 && outcome.route) succeeded.add(outcome.route);
    if (outcome.violations.length > 0) {
      // One entry per symptom: what broke, where, and the answer; one cause often breaks several checks.
      const kinds = [...new Set(outcome.violations.map((v) => v.kind))].sort().join("+");
      const where = outcome.route ?? `unrouted (${plan.op.id})`;
      const key = `${kinds} | ${where} | ${outcome.status} ${outcome.code ?? ""}`.trim();
      const entry = failures.get(key) ?? { key, count: 0, examples: [] };
      entry.count++;
      if (entry.examples.length < EXAMPLES_PER_FAILURE) entry.examples.push(outcome);
      failures.set(key, entry);
    }
    options.onProgress?.(index + 1, outcome);
  }
  report.failures = [...failures.values()].sort((a, b) => b.count - a.count);
  report.succeeded = [...succeeded].sort();
  report.duration_ms = Date.now() - started;
  return report;
}

export function formatReport(report: FuzzReport): string {
  const lines: string[] = [];
  lines.push(
    `fuzz: seed ${report.seed}, ${report.runs} random requests and ${report.sweep} of the sweep ` +
      `in ${(report.duration_ms / 1000).toFixed(1)} s`,
  );
  lines.push("", "By route and status:");
  const routes = Object.keys(report.byRoute).sort();
  const width = Math.max(...routes.map((r) => r.length), 10);
  for (const route of routes) {
    const statuses = Object.entries(report.byRoute[route]!)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, count]) => `${status}×${count}`)
      .join("  ");
    lines.push(`  ${route.padEnd(width)}  ${statuses}`);
  }
  lines.push("", "By mutation:");
  for (const [mutation, count] of Object.entries(report.byMutation).sort(([, a], [, b]) => b - a)) {
    lines.push(`  ${mutation.padEnd(20)} ${count}`);
  }
  lines.push(
    "",
    report.failures.length === 0 ? "No failures." : `${report.failures.length} distinct failures:`,
  );
  for (const failure of report.failures) {
    lines.push(`  [${failure.count}×] ${failure.key}`);
    for (const example of failure.examples) {
      lines.push(`      #${example.sequence} ${example.mutation}/${example.auth}:`);
      for (const violation of example.violations)
        lines.push(`        ${violation.kind}: ${violation.message}`);
      lines.push(`        ${example.request.method} ${example.request.target}`);
      lines.push(`        headers: ${example.request.headers}`);
      if (example.request.body) lines.push(`        body: ${example.request.body}`);
      lines.push(`        -> ${example.status} ${example.response}`);
    }
  }
  return lines.join("\n");
}

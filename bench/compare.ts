// Two results files side by side, as a Markdown table: `npx node bench/compare.ts before.json after.json`.
// Rates move with the machine's load; CPU per answer (µs/ok) much less: both are shown, with the
// share of the machine other people's processes took during each run (`others`).
import { readFileSync } from "node:fs";

type Scenario = {
  name: string;
  ok_per_s: number;
  p50_ms: number | null;
  p99_ms: number | null;
  non_2xx: number;
  socket_errors: number;
  cpu_percent: { load_generator: number; others: number };
  cpu_us_per_ok: { service: number; postgres: number };
};
type Report = {
  date: string;
  load_average_at_start: number[];
  scenarios: Scenario[];
  ratios: { name: string; value: number; target: number }[];
};

function load(file: string): Report {
  return JSON.parse(readFileSync(file, "utf8")) as Report;
}

export function compare(before: Report, after: Report): string {
  const lines = [
    `Before: ${before.date} (load average ${before.load_average_at_start.join(", ")}); after: ${after.date} (load average ${after.load_average_at_start.join(", ")}).`,
    "",
    "| Scenario | ok/s before → after | p50 ms | p99 ms | service µs/ok | PostgreSQL µs/ok | errors (non-2xx + socket) | load gen CPU | others CPU |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const b of before.scenarios) {
    const a = after.scenarios.find((s) => s.name === b.name);
    if (!a) continue;
    const pair = (x: unknown, y: unknown) => `${x ?? "–"} → ${y ?? "–"}`;
    lines.push(
      `| ${b.name} | ${pair(b.ok_per_s, a.ok_per_s)} | ${pair(b.p50_ms, a.p50_ms)} | ${pair(b.p99_ms, a.p99_ms)} | ` +
        `${pair(b.cpu_us_per_ok.service, a.cpu_us_per_ok.service)} | ${pair(b.cpu_us_per_ok.postgres, a.cpu_us_per_ok.postgres)} | ` +
        `${pair(b.non_2xx + b.socket_errors, a.non_2xx + a.socket_errors)} | ` +
        `${pair(`${b.cpu_percent.load_generator}%`, `${a.cpu_percent.load_generator}%`)} | ` +
        `${pair(`${b.cpu_percent.others}%`, `${a.cpu_percent.others}%`)} |`,
    );
  }
  lines.push("", "| Ratio | target | before | after |", "| --- | ---: | ---: | ---: |");
  for (const b of before.ratios) {
    const a = after.ratios.find((r) => r.name === b.name);
    lines.push(`| ${b.name} | ≥ ${b.target} | ${b.value} | ${a?.value ?? "–"} |`);
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const [before, after] = process.argv.slice(2);
  if (!before || !after) {
    console.error("usage: node bench/compare.ts <before.json> <after.json>");
    process.exit(2);
  }
  console.log(compare(load(before), load(after)));
}

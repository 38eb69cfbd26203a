// Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// and the same grouped by package (node_modules/<name>, node: internals, our src/ files).
//
//   npx node bench/cpu-profile-top.ts <file.cpuprofile> [top=30]
import { readFileSync } from "node:fs";

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; hitCount?: number; children?: number[] };
type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
};

export type ProfileRow = { name: string; where: string; self_ms: number; share: number };

function shortUrl(url: string): string {
  if (url === "") return "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) return url.slice(modules + "node_modules/".length);
  const src = url.indexOf("/src/");
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, "");
}

function packageOf(url: string): string {
  if (url === "") return "(native / VM)";
  if (url.startsWith("node:")) return "node: (Node internals)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const src = url.indexOf("/src/");
  if (src >= 0)
    return `service: ${url
      .slice(src + 1)
      .split("/")
      .slice(0, 2)
      .join("/")}`;
  return url;
}

/** Self time per node from the samples (each sample is the leaf running at that moment). */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  if (samples.length > 0 && deltas.length === samples.length) {
    // timeDeltas[i] is the time before sample i; attribute the time after a sample to it.
    for (let i = 0; i < samples.length; i++) {
      const next = deltas[i + 1] ?? 0;
      self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + next);
    }
    return self;
  }
  const interval =
    (profile.endTime - profile.startTime) / Math.max(1, sum(profile.nodes.map((n) => n.hitCount ?? 0)));
  for (const node of profile.nodes) self.set(node.id, (node.hitCount ?? 0) * interval);
  return self;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

export function summarise(
  file: string,
  top = 30,
): { total_ms: number; functions: ProfileRow[]; packages: ProfileRow[] } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const self = selfTimes(profile);
  const byFunction = new Map<string, { name: string; where: string; us: number }>();
  const byPackage = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const frame = node.callFrame;
    // Idle time is the event loop waiting: not CPU spent.
    if (frame.functionName === "(idle)") continue;
    total += us;
    const name = frame.functionName || "(anonymous)";
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : "";
    const key = `${name}@${where}`;
    const row = byFunction.get(key) ?? { name, where, us: 0 };
    row.us += us;
    byFunction.set(key, row);
    const pkg = frame.functionName.startsWith("(") ? frame.functionName : packageOf(frame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const toRow = (name: string, where: string, us: number): ProfileRow => ({
    name,
    where,
    self_ms: Math.round(us / 1000),
    share: Math.round((1000 * us) / Math.max(1, total)) / 10,
  });
  return {
    total_ms: Math.round(total / 1000),
    functions: [...byFunction.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((row) => toRow(row.name, row.where, row.us)),
    packages: [...byPackage.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([name, us]) => toRow(name, "", us)),
  };
}

export function profileMarkdown(file: string, top = 30): string {
  const { total_ms, functions, packages } = summarise(file, top);
  const lines = [
    `CPU profile ${file}: ${total_ms} ms of CPU (idle excluded).`,
    "",
    "| self % | self ms | function | where |",
    "| ---: | ---: | --- | --- |",
    ...functions.map((row) => `| ${row.share} | ${row.self_ms} | ${row.name} | ${row.where} |`),
    "",
    "| self % | self ms | package |",
    "| ---: | ---: | --- |",
    ...packages.map((row) => `| ${row.share} | ${row.self_ms} | ${row.name} |`),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error("usage: node bench/cpu-profile-top.ts <file.cpuprofile> [top]");
    process.exit(2);
  }
  console.log(profileMarkdown(file, top ? Number(top) : 30));
}

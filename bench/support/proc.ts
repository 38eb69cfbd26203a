// CPU accounting from /proc, in clock ticks (USER_HZ, 100 per second on Linux): what each of our
// processes spent during a scenario, what the whole machine spent, and so what everyone else
// (other engineers' test suites on this shared machine) spent meanwhile.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

export const TICKS_PER_S = 100;

type Stat = { ppid: number; utime: number; stime: number; cutime: number; cstime: number };

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces and parentheses). */
export function parseStat(text: string): Stat {
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state); field k of proc(5) is rest[k - 3].
  const field = (k: number) => Number(rest[k - 3]);
  return { ppid: field(4), utime: field(14), stime: field(15), cutime: field(16), cstime: field(17) };
}

function readStat(pid: number): Stat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

/** CPU ticks a live process has used (all its threads); 0 once it is gone. */
export function processTicks(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const stat = readStat(pid);
  return stat ? stat.utime + stat.stime : 0;
}

/**
 * CPU ticks of one PostgreSQL cluster: the postmaster, its live children (backends, walwriter...)
 * and the children it has already reaped (a pgbench run's backends exit at its end). A child
 * reaped while /proc is scanned would be in neither sum (the postmaster read before, the child
 * gone by its turn), its CPU counted as `others`: a pgbench run's 32 backends end just before its
 * `after` sample. So the scan is repeated until no child was reaped during it (the postmaster's
 * reaped total the same before and after). Rare: 9 pgbench samples in session 14 never needed it.
 */
export function clusterTicks(postmaster_pid: number | undefined): number {
  if (postmaster_pid === undefined) return 0;
  for (let attempt = 0; ; attempt++) {
    const root = readStat(postmaster_pid);
    if (!root) return 0;
    let children = 0;
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readStat(Number(entry));
      if (stat && stat.ppid === postmaster_pid) children += stat.utime + stat.stime;
    }
    const again = readStat(postmaster_pid);
    if (!again) return 0;
    const settled = again.cutime + again.cstime === root.cutime + root.cstime;
    // Ten scans without a quiet moment would mean children ending by the hundred: take the last
    // (which may count a child reaped after its turn twice).
    if (settled || attempt === 9) return again.utime + again.stime + again.cutime + again.cstime + children;
  }
}

/** Busy ticks of the whole machine, all cores: everything but idle and iowait. */
export function machineBusyTicks(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return user! + nice! + system! + irq! + softirq! + steal!;
}

/** This process (the harness) in ticks. */
export function selfTicks(): number {
  const usage = process.cpuUsage();
  return ((usage.user + usage.system) / 1e6) * TICKS_PER_S;
}

export function loadAverage(): [number, number, number] {
  const [one, five, fifteen] = os.loadavg();
  return [round2(one!), round2(five!), round2(fifteen!)];
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

export type Snapshot = Map<number, { name: string; ticks: number }>;

/** Every process's CPU ticks so far, to see afterwards who else was busy during a scenario. */
export function snapshotProcesses(): Snapshot {
  const snapshot: Snapshot = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      const stat = parseStat(text);
      const name = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
      snapshot.set(Number(entry), { name, ticks: stat.utime + stat.stime });
    } catch {
      // gone meanwhile
    }
  }
  return snapshot;
}

/** The processes not in `ours` that used the most CPU between two snapshots, as "name(pid) 45%". */
export function busiestOthers(
  before: Snapshot,
  after: Snapshot,
  ours: Set<number>,
  seconds: number,
): string[] {
  const rows: { label: string; ticks: number }[] = [];
  for (const [pid, now] of after) {
    if (ours.has(pid)) continue;
    const ticks = now.ticks - (before.get(pid)?.ticks ?? 0);
    if (ticks > 0) rows.push({ label: `${now.name}(${pid})`, ticks });
  }
  return rows
    .sort((a, b) => b.ticks - a.ticks)
    .slice(0, 4)
    .filter((row) => row.ticks / TICKS_PER_S / seconds >= 0.02)
    .map((row) => `${row.label} ${Math.round((100 * row.ticks) / TICKS_PER_S / seconds)}%`);
}

/** Our own process tree under PostgreSQL: the postmaster and its children. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat && stat.ppid === pid) children.push(Number(entry));
  }
  return children;
}

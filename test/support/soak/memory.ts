// Memory: RSS from /proc/<pid>/status; PostgreSQL's many processes share their buffers, so its
// figure is the sum of PSS (proportional set size) over the postmaster and its children.
import { readdir, readFile } from "node:fs/promises";
import type { Cluster } from "../cluster.ts";

// Memory: RSS from /proc/<pid>/status; PostgreSQL's many processes share their buffers, so its
// figure is the sum of PSS (proportional set size) over the postmaster and its children.

export async function rssMb(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => null);
  const kb = status ? /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] : undefined;
  return kb === undefined ? null : Number(kb) / 1024;
}

export async function postgresPssMb(
  postmaster: number | null,
): Promise<{ mb: number; processes: number } | null> {
  if (postmaster === null) return null;
  const pids = [postmaster];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => null);
    // Field 4 (ppid) comes after the command, which is in parentheses and may hold spaces.
    const ppid = stat ? Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) : Number.NaN;
    if (ppid === postmaster) pids.push(Number(entry));
  }
  let kb = 0;
  for (const pid of pids) {
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => null);
    kb += Number((rollup ? /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] : undefined) ?? 0);
  }
  return { mb: kb / 1024, processes: pids.length };
}

export type MemorySample = {
  api: (number | null)[];
  simulator: number | null;
  postgres: { mb: number; processes: number } | null;
};

export async function sampleMemory(cluster: Cluster): Promise<MemorySample> {
  return {
    api: await Promise.all(cluster.services.map((s) => rssMb(s?.process.pid))),
    simulator: await rssMb(cluster.simulator.process.pid),
    postgres: await postgresPssMb(await cluster.postgresPid()),
  };
}

export function formatMemory(memory: MemorySample): string {
  const mb = (value: number | null) => (value === null ? "n/a" : `${value.toFixed(0)} MB`);
  return (
    memory.api.map((value, i) => `api${i} ${mb(value)}`).join(", ") +
    `, simulator ${mb(memory.simulator)}, postgres ${memory.postgres ? `${mb(memory.postgres.mb)} PSS in ${memory.postgres.processes} processes` : "n/a"}`
  );
}

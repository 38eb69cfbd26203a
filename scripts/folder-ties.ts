// `npm run lint` (lint:ties): no two folders of src/ import each other. dependency-cruiser refuses
// a circle between files; two folders can still lean on each other through different files, and
// then neither can be read, tested or moved without the other (issue 33 found carrier <-> shared).
// A folder is src/<name>/ (or a top-level file such as src/config.ts); type-only imports count too.
import { execFileSync } from "node:child_process";

/**
 * Ties between domains that predate this check, to be untied, not to be added to: orders renders
 * an eSIM's install kit and esims searches like orders; submit records the wallet's low-balance
 * event and the wallet's audit reads the orders' totals.
 */
const KNOWN_TIES = new Set(["esims <-> orders", "orders <-> wallet"]);

type Cruise = { modules: { source: string; dependencies: { resolved: string }[] }[] };

const json = execFileSync(
  "npx",
  ["depcruise", "src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"],
  { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
);
const cruise = JSON.parse(json) as Cruise;
const folderOf = (file: string): string => file.match(/^src\/([^/]+)\//)?.[1] ?? file.replace(/^src\//, "");

const edges = new Map<string, string>(); // "a -> b" -> one file-level example
for (const module of cruise.modules) {
  for (const dependency of module.dependencies) {
    if (!dependency.resolved.startsWith("src/")) continue;
    const [from, to] = [folderOf(module.source), folderOf(dependency.resolved)];
    if (from !== to && !edges.has(`${from} -> ${to}`)) {
      edges.set(`${from} -> ${to}`, `${module.source} -> ${dependency.resolved}`);
    }
  }
}

const ties: string[] = [];
for (const [edge, example] of edges) {
  const [from = "", to = ""] = edge.split(" -> ");
  const back = edges.get(`${to} -> ${from}`);
  const name = `${from} <-> ${to}`;
  if (back !== undefined && from < to && !KNOWN_TIES.has(name)) ties.push(`${name}\n  ${example}\n  ${back}`);
}
if (ties.length > 0) {
  console.error(`folders that import each other:\n${ties.join("\n")}`);
  process.exit(1);
}
console.log(`no folder ties (${edges.size} folder dependencies; ${KNOWN_TIES.size} known domain ties)`);

// The SDK as partners get it: `npm pack` (whose prepack compiles it), then installed from the tarball
// into a scratch project with no network. The pack runs in a copy of packages/sdk, so test files
// running at once never rebuild each other's dist/ under them.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after } from "node:test";

const ROOT = process.cwd();

export type PackedSdk = {
  /** The scratch project the tarball is installed in (removed after the file's tests). */
  scratch: string;
  tarball: string;
  /** What `npm pack --json` reported: the tarball's files. */
  files: string[];
};

export function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, ...env },
  });
  assert.equal(result.status, 0, `${command} ${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * Packs the SDK and installs the tarball offline into a new scratch project (`type: module`); call it
 * at the top of a test file (its clean-up is registered with the file's `after`).
 */
export function packAndInstallSdk(): PackedSdk {
  const scratch = mkdtempSync(path.join(tmpdir(), "sdk-scratch-"));
  const copy = mkdtempSync(path.join(tmpdir(), "sdk-copy-"));
  after(() => {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  });
  cpSync(path.join(ROOT, "packages/sdk"), copy, {
    recursive: true,
    filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
  });
  // The build's tsc and @types/node, from the repository's own node_modules.
  symlinkSync(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
  const packed = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", scratch], copy, {
      PATH: `${path.join(ROOT, "node_modules/.bin")}${path.delimiter}${process.env.PATH}`,
    }),
  ) as { filename: string; files: { path: string }[] }[];
  const tarball = path.join(scratch, packed[0]!.filename);
  writeFileSync(path.join(scratch, "package.json"), JSON.stringify({ name: "scratch", type: "module" }));
  run("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund"], scratch);
  return { scratch, tarball, files: packed[0]!.files.map((file) => file.path) };
}

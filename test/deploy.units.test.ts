// The deployment files of docs/deploy.md, checked with what can check them here: the systemd units
// with systemd's own `systemd-analyze verify` (Debian's systemd package, installed by
// scripts/test-tools.sh when missing; nothing is booted), and the container recipe against the
// repository (there is no container runtime in CI): what it copies exists, what it runs is there,
// and everything src/ imports at run time is a production dependency the image installs.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { loadConfig } from "../src/config.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
const UNITS = ["esim-api.service", "esim-worker.service"];
const dir = await mkdtemp(path.join(os.tmpdir(), "esim-units-"));
after(() => rm(dir, { recursive: true, force: true }));

/** A unit as installed here: this Node for /usr/local/bin/node, this checkout for /opt/esim. */
function localised(unit: string): string {
  return readFileSync(path.join(ROOT, "deploy/systemd", unit), "utf8")
    .replaceAll("/usr/local/bin/node", process.execPath)
    .replaceAll("/opt/esim", ROOT);
}

async function verify(files: string[]): Promise<{ code: number; stderr: string }> {
  return run("systemd-analyze", ["verify", ...files], { cwd: dir }).then(
    ({ stderr }) => ({ code: 0, stderr }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
}

function directive(unit: string, key: string): string[] {
  return unit
    .split("\n")
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

test("systemd-analyze verify accepts both units without a warning", async () => {
  const files = [];
  for (const unit of UNITS) {
    const file = path.join(dir, unit);
    await writeFile(file, localised(unit));
    files.push(file);
  }
  const { code, stderr } = await verify(files);
  assert.equal(code, 0, stderr);
  assert.equal(stderr.trim(), "", "no warning (an unknown or misplaced key is only a warning)");
});

test("systemd-analyze verify names a mistyped key: the check above can fail", async () => {
  const file = path.join(dir, "esim-misplaced.service");
  await writeFile(file, localised("esim-api.service").replace("[Service]\n", "[Service]\nRestartSecc=3\n"));
  const { stderr } = await verify([file]);
  assert.match(stderr, /Unknown key '?RestartSecc'? in section '?\[?Service\]?'?/);
});

test("each unit runs node on src/main.ts in its role, straight (no npm), with the settings file", () => {
  for (const [unit, role] of [
    ["esim-api.service", "api"],
    ["esim-worker.service", "worker"],
  ] as const) {
    const text = readFileSync(path.join(ROOT, "deploy/systemd", unit), "utf8");
    assert.deepEqual(directive(text, "ExecStart"), ["/usr/local/bin/node src/main.ts"], unit);
    assert.ok(
      directive(text, "Environment").some((line) => line.split(" ").includes(`ROLE=${role}`)),
      unit,
    );
    assert.equal(loadConfig({ ROLE: role }).role, role);
    assert.deepEqual(directive(text, "KillSignal"), ["SIGTERM"], unit);
    assert.deepEqual(directive(text, "EnvironmentFile"), ["/etc/esim/production.env"], unit);
    for (const exec of [...directive(text, "ExecStart"), ...directive(text, "ExecStartPre")]) {
      const script = exec.split(" ")[1]!;
      assert.ok(existsSync(path.join(ROOT, script)), `${unit} runs ${script}, which exists`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// The container recipe

const CONTAINERFILE = readFileSync(path.join(ROOT, "deploy/Containerfile"), "utf8");
const INSTRUCTIONS = new Set([
  "FROM",
  "RUN",
  "CMD",
  "LABEL",
  "EXPOSE",
  "ENV",
  "ADD",
  "COPY",
  "ENTRYPOINT",
  "VOLUME",
  "USER",
  "WORKDIR",
  "ARG",
  "ONBUILD",
  "STOPSIGNAL",
  "HEALTHCHECK",
  "SHELL",
]);

/** The instructions, continuation lines joined, comments and blank lines left out. */
function instructions(): { keyword: string; rest: string }[] {
  const joined = CONTAINERFILE.split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [keyword, ...rest] = line.trim().split(/\s+/);
      return { keyword: keyword!, rest: rest.join(" ") };
    });
}

test("the Containerfile's instructions are Dockerfile instructions and its base image is the Node of package.json", () => {
  const all = instructions();
  for (const { keyword } of all) assert.ok(INSTRUCTIONS.has(keyword), `unknown instruction ${keyword}`);
  const engines = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).engines.node as string;
  const major = /^>=(\d+)/.exec(engines)![1];
  const bases = all.filter((i) => i.keyword === "FROM").map((i) => i.rest.split(" ")[0]!);
  assert.ok(bases.length > 0);
  for (const base of bases) assert.match(base, new RegExp(`^docker\\.io/library/node:${major}-`), base);
  assert.equal(
    all.filter((i) => i.keyword === "USER").at(-1)?.rest,
    "node",
    "runs as the image's unprivileged user",
  );
});

test("the Containerfile copies files that exist and runs node on src/main.ts in exec form", () => {
  const all = instructions();
  for (const { rest } of all.filter((i) => i.keyword === "COPY" && !i.rest.startsWith("--from"))) {
    const sources = rest.split(" ").slice(0, -1);
    for (const source of sources) assert.ok(existsSync(path.join(ROOT, source)), `COPY ${source}: exists`);
  }
  const cmd = all.filter((i) => i.keyword === "CMD").at(-1)!;
  assert.deepEqual(
    JSON.parse(cmd.rest),
    ["node", "src/main.ts"],
    "exec form: node is PID 1 and gets SIGTERM",
  );
  // The commands its header shows run files the image copies.
  for (const [, script] of CONTAINERFILE.matchAll(/esim-ordering node (\S+)/g)) {
    assert.ok(existsSync(path.join(ROOT, script!)), script);
    const copied = all.some(
      (i) => i.keyword === "COPY" && i.rest.split(" ").some((s) => script!.startsWith(s)),
    );
    assert.ok(copied, `${script} is copied into the image`);
  }
});

/** Every module specifier src/ loads at run time: imports (type-only ones are erased), dynamic imports, require(). */
function runtimeSpecifiers(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith(".ts")) {
        const text = readFileSync(file, "utf8");
        const patterns = [
          /^\s*(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+"([^"]+)"/gm,
          /^\s*import\s+"([^"]+)"/gm,
          /\bimport\(\s*"([^"]+)"\s*\)/g,
          /\brequire(?:\.resolve)?\(\s*"([^"]+)"\s*\)/g,
        ];
        for (const pattern of patterns)
          for (const match of text.matchAll(pattern)) found.set(match[1]!, path.relative(ROOT, file));
      }
    }
  };
  walk(path.join(ROOT, "src"));
  return found;
}

test("everything src/ loads at run time is in src/ or a production dependency the image installs", () => {
  const dependencies = Object.keys(
    JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).dependencies,
  );
  const specifiers = runtimeSpecifiers();
  assert.ok(specifiers.size > 50, `found the imports (${specifiers.size})`);
  for (const [specifier, file] of specifiers) {
    if (specifier.startsWith("node:")) continue;
    if (specifier.startsWith(".")) {
      const target = path.resolve(ROOT, path.dirname(file), specifier);
      assert.ok(
        target.startsWith(path.join(ROOT, "src") + path.sep),
        `${file} imports ${specifier}, outside src/`,
      );
      continue;
    }
    const name = specifier.startsWith("@")
      ? specifier.split("/").slice(0, 2).join("/")
      : specifier.split("/")[0]!;
    assert.ok(
      dependencies.includes(name),
      `${file} loads ${specifier}: ${name} must be a dependency, not a devDependency`,
    );
  }
});

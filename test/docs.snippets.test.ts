// The READMEs' examples run as pasted. Every fenced ```sh / ```bash block of README.md runs, in
// order, in one `bash -e` session (as a person pastes them top to bottom into one terminal); every
// ```ts block of README.md and packages/sdk/README.md is type-checked against the packed SDK
// installed from its tarball, then run on Node, one module per `##` section (its blocks in order).
// They run against a sandbox service started here with a fresh database and
// ADMIN_TOKEN=dev-admin-token-change-me (the README's own), with BASE=http://127.0.0.1:<port> and
// API_KEY of a partner made through the operator API exported. The only change made to a block:
// a line `BASE=http://localhost:3000` gets the test's port.
//
// A block that must not run (it starts the service, installs, or is a fragment of a larger program)
// is preceded by the line `<!-- not run: <why> -->`; the reason is required. Other fences (```js,
// ```ini, ```sql, plain ```) are not code to paste into a shell or a TypeScript file and are left.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { createTestDatabase } from "./support/db.ts";
import { createPartner } from "./support/fixtures.ts";
import { packAndInstallSdk, run } from "./support/sdk-tarball.ts";
import { startServiceProcess } from "./support/service.ts";

const ROOT = process.cwd();
const ADMIN_TOKEN = "dev-admin-token-change-me";
const RUNNABLE = new Set(["sh", "bash", "ts"]);

type Block = { file: string; section: string; line: number; lang: string; code: string };

/** The fenced blocks of a Markdown file with their `##` section, less those marked not to run. */
export function runnableBlocks(file: string): Block[] {
  const lines = readFileSync(path.join(ROOT, file), "utf8").split("\n");
  const blocks: Block[] = [];
  let section = "(top)";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("## ")) section = line.slice(3);
    const open = /^```(\w*)\s*$/.exec(line);
    if (!open) continue;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) code.push(lines[i]!);
    const marker = lines.slice(0, start).findLast((previous) => previous.trim() !== "") ?? "";
    if (/^<!-- not run/.test(marker)) {
      assert.match(marker, /^<!-- not run: \S.* -->$/, `${file}:${start + 1}: say why it does not run`);
      continue;
    }
    if (RUNNABLE.has(open[1]!)) {
      blocks.push({ file, section, line: start + 1, lang: open[1]!, code: `${code.join("\n")}\n` });
    }
  }
  return blocks;
}

const sdk = packAndInstallSdk();
const database = await createTestDatabase();
const data_dir = mkdtempSync(path.join(os.tmpdir(), "snippets-"));
after(() => rmSync(data_dir, { recursive: true, force: true }));
const service = await startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN, DATA_DIR: data_dir });
after(() => service.stop());
const partner = await createPartner(service.url, { admin_token: ADMIN_TOKEN, credit_minor: 100_000 });
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_"))),
  BASE: service.url,
  API_KEY: partner.api_key,
  ADMIN_TOKEN,
  npm_config_offline: "true",
};

test("README.md's shell blocks run in order in one bash -e session", () => {
  const blocks = runnableBlocks("README.md").filter((block) => block.lang !== "ts");
  assert.ok(blocks.length >= 10, `found ${blocks.length} shell blocks`);
  const script = blocks
    .map(
      (block) =>
        `echo ${JSON.stringify(`--- ${block.file}:${block.line} (${block.section})`)} >&2\n` +
        block.code.replaceAll(/^BASE=http:\/\/localhost:3000$/gm, `BASE=${service.url}`),
    )
    .join("");
  // Whatever a block left running in the background (listen, a receiver) goes when the session ends.
  writeFileSync(
    path.join(sdk.scratch, "readme.sh"),
    `trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${script}`,
  );
  const result = spawnSync("bash", ["-e", "readme.sh"], {
    cwd: sdk.scratch,
    env,
    encoding: "utf8",
    timeout: 180_000,
  });
  const where = result.stderr.split("\n").findLast((line) => line.startsWith("--- ")) ?? "";
  assert.equal(
    result.status,
    0,
    `failed in ${where}\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`,
  );
  // curl -s exits 0 on a 4xx: an error's problem document in the output is a broken example.
  assert.doesNotMatch(result.stdout, /"code":"/, "no example answered an error");
  assert.match(result.stdout, /wallet\.credited {2}evt_\S+ {2}-> 204/, "listen forwarded the credit");
  assert.match(result.stdout, /^wallet\.credited evt_/m, "the receiver verified it with the printed secret");
  assert.match(result.stdout, /"status":"refunded"/, "the refund example refunded");
});

test("the TypeScript blocks of both READMEs type-check against the packed SDK and run", () => {
  const blocks = [...runnableBlocks("README.md"), ...runnableBlocks("packages/sdk/README.md")].filter(
    (block) => block.lang === "ts",
  );
  assert.ok(blocks.length >= 5, `found ${blocks.length} TypeScript blocks`);
  const modules = new Map<string, Block[]>();
  for (const block of blocks) {
    const name = `snippet-${block.file.replaceAll(/\W+/g, "-")}-${block.section.replaceAll(/\W+/g, "-")}.ts`;
    modules.set(name, [...(modules.get(name) ?? []), block]);
  }
  for (const [name, parts] of modules) {
    writeFileSync(
      path.join(sdk.scratch, name),
      parts.map((block) => `// ${block.file}:${block.line}\n${block.code}`).join("\n"),
    );
  }
  writeFileSync(
    path.join(sdk.scratch, "tsconfig.snippets.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        lib: ["es2022", "dom"],
        types: ["node"],
        typeRoots: [path.join(ROOT, "node_modules/@types")],
        strict: true,
        outDir: "out",
      },
      files: [...modules.keys()],
    }),
  );
  run(path.join(ROOT, "node_modules/.bin/tsc"), ["-p", "tsconfig.snippets.json"], sdk.scratch);
  for (const name of modules.keys()) {
    const result = spawnSync(process.execPath, [path.join("out", name.replace(/\.ts$/, ".js"))], {
      cwd: sdk.scratch,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(result.status, 0, `${name}:\n${result.stdout}\n${result.stderr}`);
  }
});

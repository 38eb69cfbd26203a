// `npm run sdk:types`: regenerates the SDK's types (packages/sdk/src/generated/openapi.ts) from
// the committed docs/openapi.json with openapi-typescript; with --check (`npm run sdk:check`, in
// CI) fails when the committed file differs, i.e. a route changed and the SDK was not regenerated.
// openapi-typescript needs TypeScript 5's compiler API, which the root's TypeScript 7 does not
// have, so it lives with its own TypeScript 5 in tools/openapi-typescript.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const SOURCE = "docs/openapi.json";
const TARGET = "packages/sdk/src/generated/openapi.ts";
const CLI = "tools/openapi-typescript/node_modules/openapi-typescript/bin/cli.js";

function generate(output: string): void {
  execFileSync(process.execPath, [CLI, SOURCE, "--output", output], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

if (process.argv.includes("--check")) {
  const dir = mkdtempSync(path.join(tmpdir(), "sdk-types-"));
  try {
    const fresh = path.join(dir, "openapi.ts");
    generate(fresh);
    if (readFileSync(fresh, "utf8") !== readFileSync(TARGET, "utf8")) {
      console.error(`${TARGET} is stale: run \`npm run sdk:types\` and commit it.`);
      process.exit(1);
    }
    console.log(`${TARGET} matches ${SOURCE}.`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  generate(TARGET);
  console.log(`wrote ${TARGET}`);
}

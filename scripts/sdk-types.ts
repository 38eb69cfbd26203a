// `npm run sdk:types`: regenerates what the SDK package makes from the committed docs/openapi.json:
// its types (packages/sdk/src/generated/openapi.ts, with openapi-typescript) and its Postman
// collection and `.http` file (packages/sdk/collections/, scripts/sdk-collections.ts). With --check
// (`npm run sdk:check`, in CI) fails when a committed file differs, i.e. a route changed and the
// SDK was not regenerated.
// openapi-typescript needs TypeScript 5's compiler API, which the root's TypeScript 7 does not
// have, so it lives with its own TypeScript 5 in tools/openapi-typescript.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { renderCollections } from "./sdk-collections.ts";

const SOURCE = "docs/openapi.json";
const TYPES = "packages/sdk/src/generated/openapi.ts";
const POSTMAN = "packages/sdk/collections/esim-partner.postman_collection.json";
const HTTP = "packages/sdk/collections/esim-partner.http";
const CLI = "tools/openapi-typescript/node_modules/openapi-typescript/bin/cli.js";

/** Every generated file's path and fresh content. */
function generate(): Map<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), "sdk-types-"));
  try {
    const types = path.join(dir, "openapi.ts");
    execFileSync(process.execPath, [CLI, SOURCE, "--output", types], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    const collections = renderCollections(JSON.parse(readFileSync(SOURCE, "utf8")));
    return new Map([
      [TYPES, readFileSync(types, "utf8")],
      [POSTMAN, collections.postman],
      [HTTP, collections.http],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function committed(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

const fresh = generate();
if (process.argv.includes("--check")) {
  const stale = [...fresh].filter(([file, text]) => committed(file) !== text).map(([file]) => file);
  for (const file of stale) console.error(`${file} is stale: run \`npm run sdk:types\` and commit it.`);
  if (stale.length > 0) process.exit(1);
  console.log(`${[...fresh.keys()].join(", ")} match ${SOURCE}.`);
} else {
  for (const [file, text] of fresh) {
    writeFileSync(file, text);
    console.log(`wrote ${file}`);
  }
}

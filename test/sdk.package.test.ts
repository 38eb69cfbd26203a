// The SDK as partners get it: `npm pack` (whose prepack compiles packages/sdk with tsc), installed
// from the tarball into a scratch project with no network, type-checked against a purchase
// written the way the README shows it, then that purchase run on Node against the real service;
// and the package itself checked as npm would publish it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { packAndInstallSdk, run } from "./support/sdk-tarball.ts";
import { balance, createWorld, newPartner } from "./support/world.ts";

const ROOT = process.cwd();
const TSC = path.join(ROOT, "node_modules", ".bin", "tsc");
const { scratch, files } = packAndInstallSdk();

const PURCHASE = `import { EsimClient, isApiError, type Order } from "@esim-partner/sdk";

export async function purchase(apiKey: string, baseUrl: string): Promise<Order> {
  const client = new EsimClient({ apiKey, baseUrl });
  const { data } = await client.catalog.packages("FR");
  const cart = await client.carts.create({ package_id: data[0]!.package_id });
  try {
    return await client.orders.submit({
      cart_key: cart.cart_key,
      email: "ana@example.com",
      phone: "+14155550123",
      first_name: "Ana",
      last_name: "Lima",
    });
  } catch (err) {
    if (isApiError(err, "insufficient_balance")) console.error("top up the wallet:", err.detail);
    throw err;
  }
}
`;

test("npm pack makes a tarball a fresh project installs offline, type-checks and runs", async () => {
  const installed = JSON.parse(
    readFileSync(path.join(scratch, "node_modules/@esim-partner/sdk/package.json"), "utf8"),
  );
  assert.equal(installed.version, "0.1.0");
  assert.equal(installed.dependencies, undefined, "no runtime dependencies");

  writeFileSync(path.join(scratch, "purchase.ts"), PURCHASE);
  writeFileSync(
    path.join(scratch, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        module: "nodenext",
        moduleResolution: "nodenext",
        lib: ["es2022", "dom"],
        types: [],
        strict: true,
        outDir: "out",
      },
      files: ["purchase.ts"],
    }),
  );
  run(TSC, ["-p", "."], scratch);

  // A typo the types must catch: a wrong field name does not compile.
  writeFileSync(path.join(scratch, "wrong.ts"), PURCHASE.replace("cart_key: cart.cart_key", "cartKey: 1"));
  const config = JSON.parse(readFileSync(path.join(scratch, "tsconfig.json"), "utf8"));
  writeFileSync(
    path.join(scratch, "tsconfig.wrong.json"),
    JSON.stringify({
      ...config,
      compilerOptions: { ...config.compilerOptions, noEmit: true },
      files: ["wrong.ts"],
    }),
  );
  const wrong = spawnSync(TSC, ["-p", "tsconfig.wrong.json"], { cwd: scratch, encoding: "utf8" });
  assert.notEqual(wrong.status, 0, "a misspelt field is a type error");
  assert.match(wrong.stdout, /cartKey/);

  // The compiled purchase, on Node, through the installed package, against the real service.
  const world = await createWorld();
  const api = world.services[0]!.url;
  const partner = await newPartner(api, 10_000);
  writeFileSync(
    path.join(scratch, "main.mjs"),
    `import { purchase } from "./out/purchase.js";
const order = await purchase(process.argv[2], process.argv[3]);
console.log(JSON.stringify(order));`,
  );
  const order = JSON.parse(run(process.execPath, ["main.mjs", partner.api_key, api], scratch));
  assert.equal(order.status, "completed");
  assert.equal(await balance(api, partner.api_key), 10_000 - order.total.amount_minor);
});

test("the tarball holds the ESM and CommonJS builds, the command, the collections and the changelog, and nothing else", () => {
  for (const file of [
    "package.json",
    "README.md",
    "CHANGELOG.md",
    "dist/esm/index.js",
    "dist/esm/index.d.ts",
    "dist/esm/cli/main.js",
    "dist/cjs/index.js",
    "dist/cjs/index.d.ts",
    "dist/cjs/package.json",
    "collections/esim-partner.postman_collection.json",
    "collections/esim-partner.http",
  ]) {
    assert.ok(files.includes(file), `${file} is packed: ${files.join(" ")}`);
  }
  const outside = files.filter(
    (file) => !/^(dist\/(esm|cjs)\/|collections\/|package\.json$|README\.md$|CHANGELOG\.md$)/.test(file),
  );
  assert.deepEqual(outside, [], "sources, tsconfigs and tests stay out of the tarball");
  assert.ok(!files.some((file) => file.startsWith("dist/cjs/cli/")), "the command is ESM only");
  // The library runs on browsers and edge runtimes: only the command may use Node's modules.
  const library = files.filter((file) => /^dist\/(esm|cjs)\/(?!cli\/).*\.js$/.test(file));
  for (const file of library) {
    const text = readFileSync(path.join(scratch, "node_modules/@esim-partner/sdk", file), "utf8");
    assert.doesNotMatch(text, /["']node:/, `${file} imports no node: module`);
  }
});

test("provenance fields agree with one another and with the repository's package", () => {
  const sdk = JSON.parse(
    readFileSync(path.join(scratch, "node_modules/@esim-partner/sdk/package.json"), "utf8"),
  );
  const root = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
  const repository = sdk.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
  assert.equal(sdk.repository.type, "git");
  assert.equal(sdk.repository.directory, "packages/sdk");
  assert.equal(sdk.homepage, `${repository}/tree/main/packages/sdk#readme`);
  assert.equal(sdk.bugs.url, `${repository}/issues`);
  assert.equal(sdk.license, root.license ?? "UNLICENSED", "one licence for the service and its SDK");
  assert.equal(
    sdk.version,
    readFileSync(path.join(ROOT, "packages/sdk/src/core/transport.ts"), "utf8").match(
      /SDK_VERSION = "(.+)"/,
    )![1],
  );
  const changelog = readFileSync(path.join(ROOT, "packages/sdk/CHANGELOG.md"), "utf8");
  assert.match(
    changelog,
    new RegExp(`^## ${sdk.version.replaceAll(".", "\\.")}`, "m"),
    "the CHANGELOG names this version",
  );
});

test("CommonJS callers require the same API, types included", () => {
  writeFileSync(
    path.join(scratch, "main.cjs"),
    `const sdk = require("@esim-partner/sdk");
const client = new sdk.EsimClient({ apiKey: "sand_x", baseUrl: "http://127.0.0.1:1" });
console.log(typeof sdk.verifyWebhook, typeof sdk.signWebhook, typeof client.events.list, sdk.EsimClient.VERSION);`,
  );
  assert.equal(run(process.execPath, ["main.cjs"], scratch).trim(), "function function function 0.1.0");
  writeFileSync(
    path.join(scratch, "typed.cts"),
    `import sdk = require("@esim-partner/sdk");
export const client: sdk.EsimClient = new sdk.EsimClient({ apiKey: "sand_x", baseUrl: "http://127.0.0.1:1" });
export const wrong: sdk.Order["orderID"] = 1;
`,
  );
  writeFileSync(
    path.join(scratch, "tsconfig.cts.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        lib: ["es2022", "dom"],
        types: [],
        strict: true,
        noEmit: true,
      },
      files: ["typed.cts"],
    }),
  );
  const checked = spawnSync(TSC, ["-p", "tsconfig.cts.json"], { cwd: scratch, encoding: "utf8" });
  // The one error is the deliberate one: the types resolved through the `require` condition.
  assert.match(checked.stdout, /typed\.cts\(3,14\).*number.*string/);
  assert.equal(checked.stdout.trim().split("\n").length, 1, checked.stdout);
});

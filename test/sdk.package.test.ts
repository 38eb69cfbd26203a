// The SDK as partners get it: `npm pack` (whose prepack compiles packages/sdk with tsc), installed
// from the tarball into a scratch project with no network, type-checked against a purchase
// written the way the README shows it, then that purchase run on Node against the real service.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { balance, createWorld, newPartner } from "./support/world.ts";

const ROOT = process.cwd();
const TSC = path.join(ROOT, "node_modules", ".bin", "tsc");
const scratch = mkdtempSync(path.join(tmpdir(), "sdk-scratch-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 120_000 });
  assert.equal(result.status, 0, `${command} ${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

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
  const packed = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", scratch], path.join(ROOT, "packages/sdk")),
  ) as { filename: string; files: { path: string }[] }[];
  const files = packed[0]!.files.map((f) => f.path);
  assert.ok(files.includes("dist/index.js") && files.includes("dist/index.d.ts"), files.join(" "));
  assert.ok(!files.some((f) => f.startsWith("src/")), "sources stay out of the tarball");

  writeFileSync(path.join(scratch, "package.json"), JSON.stringify({ name: "scratch", type: "module" }));
  const tarball = path.join(scratch, packed[0]!.filename);
  run("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund"], scratch);
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

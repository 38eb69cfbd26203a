// The API reference at /docs: Redoc's standalone bundle from its npm package, served by the
// service itself, rendering /openapi.json offline under the page's own CSP. Checked with real
// HTTP requests to a listening app and, where Chromium is installed (Debian's `chromium`), in a
// headless browser with no network but the service.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { createTestApp } from "./support/app.ts";

const served = await createTestApp();
const base = await served.app.listen({ port: 0, host: "127.0.0.1" });
const CHROMIUM = "/usr/bin/chromium";

test("/docs is a page that loads Redoc and the document from this origin only, under its own CSP", async () => {
  const page = await fetch(`${base}/docs`);
  assert.equal(page.status, 200);
  assert.match(String(page.headers.get("content-type")), /^text\/html/);
  const html = await page.text();
  assert.match(html, /Partner eSIM Ordering API/);
  assert.doesNotMatch(html, /(src|href)="https?:\/\//, "nothing loaded from other hosts");
  const csp = String(page.headers.get("content-security-policy"));
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/, "no inline or foreign scripts");
  assert.match(csp, /connect-src 'self'/);

  const scripts = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]!);
  assert.deepEqual(scripts, ["/docs/redoc.standalone.js", "/docs/init.js"]);
  const bundle = await fetch(base + scripts[0]);
  assert.equal(bundle.status, 200);
  assert.match(String(bundle.headers.get("content-type")), /^text\/javascript/);
  const installed = readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"));
  assert.ok(Buffer.from(await bundle.arrayBuffer()).equals(installed), "the npm package's bundle, as is");
  const init = await (await fetch(base + scripts[1])).text();
  assert.match(init, /Redoc\.init\("\/openapi\.json"/);

  // Other routes keep the API's strict policy: the docs policy is for the page only.
  const health = await fetch(`${base}/healthz`);
  assert.equal(health.headers.get("content-security-policy"), "default-src 'none'; frame-ancestors 'none'");
});

/** The operations the SDK covers; a route added later gets its SDK sample with its SDK resource. */
const SDK_OPERATIONS = [
  "listDestinationPackages",
  "createCart",
  "submitOrder",
  "getOrder",
  "listOrders",
  "listAvailableTopUps",
  "submitTopUp",
  "getWallet",
  "listWalletTransactions",
  "setLowBalanceAlert",
  "listEsims",
  "getEsim",
  "getEsimQrPng",
  "simulateEsimEvent",
  "createWebhookEndpoint",
  "listWebhookEndpoints",
  "getWebhookEndpoint",
  "updateWebhookEndpoint",
  "deleteWebhookEndpoint",
  "rotateWebhookSecret",
  "sendWebhookTestEvent",
  "listWebhookDeliveries",
  "retryWebhookDelivery",
  "listEvents",
  "getEvent",
];

test("every operation of the served document has a curl sample, and each the SDK covers an SDK one", async () => {
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, any>>;
  };
  const operationIds = Object.values(document.paths).flatMap((methods) =>
    Object.values(methods).map((op) => op.operationId),
  );
  for (const id of SDK_OPERATIONS) assert.ok(operationIds.includes(id), `${id} is served`);
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const samples = op["x-codeSamples"] as { lang: string; label: string; source: string }[];
      const labels = samples.map((s) => s.label);
      assert.ok(labels.includes("curl"), `${method} ${path}`);
      const curl = samples.find((s) => s.label === "curl")!.source;
      assert.match(curl, new RegExp(`^curl -X ${method.toUpperCase()} "\\$BASE_URL/`));
      assert.doesNotMatch(curl, /\{\w+\}/, `${method} ${path}: every path parameter has a value`);
      if (SDK_OPERATIONS.includes(op.operationId)) assert.ok(labels.includes("SDK"), `${op.operationId}`);
    }
  }
});

test("in a headless browser with no other network, /docs renders the operations", async () => {
  assert.ok(
    existsSync(CHROMIUM),
    "Chromium is installed by scripts/test-tools.sh, which npm test runs first",
  );
  // Asynchronous: the app answering the browser runs in this process.
  const { stdout: dom } = await promisify(execFile)(
    CHROMIUM,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      // Every host but the service's resolves nowhere: a font or script from elsewhere would fail.
      `--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`,
      "--virtual-time-budget=15000",
      "--dump-dom",
      `${base}/docs`,
    ],
    { encoding: "utf8", timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
  );
  assert.match(dom, /List the packages and B2B prices of a destination/, "an operation rendered");
  assert.match(dom, /orders\/submit-topup/);
  assert.match(dom, /@esim-partner\/sdk/, "the SDK sample rendered");
  assert.match(dom, /insufficient_balance/, "the errors table of the description rendered");
  assert.doesNotMatch(dom, /Something went wrong/, "Redoc did not fail");
});

test("every SDK sample type-checks against the SDK's own source", async () => {
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, any>>;
  };
  const dir = mkdtempSync(path.join(tmpdir(), "sdk-samples-"));
  try {
    const files: string[] = [];
    for (const methods of Object.values(document.paths)) {
      for (const op of Object.values(methods)) {
        const sdk = (op["x-codeSamples"] as { label: string; source: string }[]).find(
          (s) => s.label === "SDK",
        );
        if (!sdk) continue;
        // Node's `process` without @types/node; the submit sample goes on from a cart made before it.
        const given = ["declare const process: { env: Record<string, string | undefined> };"];
        if (!/const cart\b/.test(sdk.source)) given.push("declare const cart: { cart_key: string };");
        const source = sdk.source.replace(/\n\n/, `\n\n${given.join("\n")}\n`);
        files.push(`${op.operationId}.ts`);
        writeFileSync(path.join(dir, files.at(-1)!), `${source}\nexport {};\n`);
      }
    }
    assert.ok(files.length >= SDK_OPERATIONS.length, files.join(" "));
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const sdk = path.resolve("packages/sdk/src/index.ts");
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          lib: ["es2022", "dom"],
          types: [],
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          skipLibCheck: true,
          paths: { "@esim-partner/sdk": [sdk] },
        },
        files,
      }),
    );
    const tsc = path.resolve("node_modules/.bin/tsc");
    const checked = spawnSync(tsc, ["-p", dir], { encoding: "utf8", timeout: 120_000 });
    assert.equal(checked.status, 0, `${checked.stdout}\n${checked.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

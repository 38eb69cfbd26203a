// deploy/production.env.example is the operator's starting point: it must name every variable
// src/config.ts reads (so it cannot drift from the code), be refused as it stands (a required value
// left empty is named by `config check`), and pass `config check` once its empty values are filled.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { loadConfig } from "../src/config.ts";

const EXAMPLE = "deploy/production.env.example";

/** KEY=value lines (not comments), in order. */
function assignments(text: string): [string, string][] {
  return text
    .split("\n")
    .filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line))
    .map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    });
}

/** Every variable named in the file, set or commented out (`# NAME=`). */
function named(text: string): Set<string> {
  return new Set([...text.matchAll(/^(?:# )?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!));
}

/** The variables loadConfig reads from `vars`, recorded as it reads them. */
function readBy(vars: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy(vars, {
    get: (target, name) => {
      if (typeof name === "string") read.add(name);
      return target[name as string];
    },
  });
  try {
    loadConfig(recording);
  } catch {
    // Whatever it refuses, it has read what it read.
  }
  return read;
}

/** Values for the required settings the example leaves empty: what an operator would write. */
function filled(): Record<string, string> {
  const secret = () => randomBytes(32).toString("hex");
  return {
    DATABASE_URL: `postgres://esim:${secret()}@db.internal:5432/esim`,
    ADMIN_TOKEN: secret(),
    SMTP_URL: `smtps://esim:${secret()}@smtp.example.com:465`,
    CARRIER_URL: "https://carrier.example.com",
    CARRIER_API_KEY: secret(),
    CARRIER_CALLBACK_TOKEN: secret(),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64"),
    METRICS_TOKEN: secret(),
  };
}

function configCheck(vars: Record<string, string>, json = false) {
  // Only the file's settings (and PATH): nothing of this test process's environment leaks in.
  return spawnSync(process.execPath, ["src/cli/main.ts", "config", "check", ...(json ? ["--json"] : [])], {
    env: { PATH: process.env.PATH ?? "", ...vars },
    encoding: "utf8",
    timeout: 20_000,
  });
}

test("the example names every variable config.ts reads, and nothing else", async () => {
  const text = await readFile(EXAMPLE, "utf8");
  const source = await readFile("src/config.ts", "utf8");
  const in_source = [...source.matchAll(/\(env, "([A-Za-z_][A-Za-z0-9_]*)"/g)].map((m) => m[1]!);
  const example = Object.fromEntries(assignments(text));
  const read = new Set([...in_source, ...readBy({}), ...readBy({ ...example, ...filled() })]);
  assert.ok(read.has("PORT") && read.has("ES2PLUS_CA_FILE"), "the reads were recorded");
  const missing = [...read].filter((name) => !named(text).has(name));
  assert.deepEqual(missing, [], `${EXAMPLE} does not name these (add each with its default and meaning)`);
  const stale = [...named(text)].filter((name) => !read.has(name));
  assert.deepEqual(stale, [], `${EXAMPLE} names variables config.ts never reads`);
});

test("as it stands the example is refused, naming each required value left empty", async () => {
  const example = Object.fromEntries(assignments(await readFile(EXAMPLE, "utf8")));
  const result = configCheck(example, true);
  assert.equal(result.status, 1, result.stderr);
  const report = JSON.parse(result.stdout) as { ok: boolean; problems: { variable: string }[] };
  assert.equal(report.ok, false);
  assert.deepEqual(report.problems.map((p) => p.variable).sort(), [
    "ADMIN_TOKEN",
    "CARRIER_API_KEY",
    "CARRIER_CALLBACK_TOKEN",
    "CARRIER_URL",
    "DATABASE_URL",
    "SMTP_URL",
    "WEBHOOK_SECRET_KEY",
  ]);
  const text = configCheck(example);
  assert.equal(text.status, 1);
  assert.match(text.stdout, /^Configuration: 7 problems/);
  assert.match(text.stdout, /^ {2}DATABASE_URL: is required when APP_ENV=production$/m);
});

test("filled in, the example passes config check, which prints the settings with every secret hidden", async () => {
  const values = filled();
  const example = Object.fromEntries(assignments(await readFile(EXAMPLE, "utf8")));
  for (const [name, value] of Object.entries(example)) {
    if (value === "")
      assert.ok(values[name], `${name} is empty in the example: give the test a value for it`);
  }
  const vars = { ...example, ...values };
  const result = configCheck(vars);
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /^Configuration OK \(APP_ENV=production\)/);
  assert.match(result.stdout, /database_url +postgres:\/\/esim:\*\*\*\*@db\.internal:5432\/esim/);
  assert.match(result.stdout, /admin_token +\(set, hidden\)/);
  for (const name of [
    "ADMIN_TOKEN",
    "CARRIER_API_KEY",
    "CARRIER_CALLBACK_TOKEN",
    "WEBHOOK_SECRET_KEY",
    "METRICS_TOKEN",
  ]) {
    assert.ok(!result.stdout.includes(vars[name]!), `${name}'s value is not printed`);
  }
  for (const url of ["DATABASE_URL", "SMTP_URL"]) {
    const password = new URL(vars[url]!).password;
    assert.ok(!result.stdout.includes(password), `${url}'s password is not printed`);
  }
  const json = JSON.parse(configCheck(vars, true).stdout) as {
    ok: boolean;
    settings: Record<string, unknown>;
  };
  assert.equal(json.ok, true);
  assert.equal(json.settings.app_env, "production");
  assert.equal(json.settings.webhook_secret_key, "(set, hidden)");
});

test("config check names an ES2+ certificate file start-up could not read", () => {
  const result = configCheck({
    CARRIER_PROFILES: "es2plus",
    CARRIER_URL: "https://carrier.example.com",
    ES2PLUS_URL: "https://smdp.example.com",
    ES2PLUS_REQUESTER_ID: "esim-api",
    ES2PLUS_CLIENT_CERT_FILE: "/nonexistent/client.pem",
    ES2PLUS_CLIENT_KEY_FILE: "/nonexistent/client.key",
    ES2PLUS_CA_FILE: "/nonexistent/ca.pem",
    ES2PLUS_SMDP_ADDRESS: "smdp.example.com",
  });
  assert.equal(result.status, 1, result.stdout + result.stderr);
  for (const name of ["ES2PLUS_CLIENT_CERT_FILE", "ES2PLUS_CLIENT_KEY_FILE", "ES2PLUS_CA_FILE"]) {
    assert.match(result.stdout, new RegExp(`^ {2}${name}: cannot read /nonexistent/`, "m"));
  }
});

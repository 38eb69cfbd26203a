// The failover drill of docs/deploy.md (scripts/failover-drill.ts), run whole: a primary loaded by
// the service, a standby from `pg_basebackup -R` made synchronous (`ANY 1`), purchases eight at a
// time, the primary killed (-m immediate) the moment the last is answered, the standby promoted;
// on it every purchase answered 200 is there and completed, the ledger audit passes, and the
// service buys again. Debian's PostgreSQL, as the restore drill.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");

test("a synchronous standby promoted after the primary is killed has every purchase answered 200, and the books balance", async (t) => {
  const { stdout } = await run(process.execPath, ["scripts/failover-drill.ts"], {
    cwd: ROOT,
    timeout: 200_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`the drill failed: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
  });
  const lines = stdout.split("\n");
  const line = (prefix: string) => lines.find((l) => l.startsWith(prefix));
  t.diagnostic(`${line("failover drill:")}; ${line("promotion:")}`);
  assert.equal(lines.filter((l) => l.startsWith("PROBLEM")).length, 0, stdout);
  assert.ok(lines.includes("failover drill passed"), stdout);
  // PostgreSQL itself says the standby was synchronous before the purchases that count.
  assert.equal(line("standby replication:"), "standby replication: streaming, quorum", stdout);
  const killed = lines.find((l) => l.endsWith("then the primary was killed")) ?? "";
  const acknowledged = /^(\d+) purchases answered 200, then the primary was killed$/.exec(killed);
  assert.ok(acknowledged, stdout);
  assert.equal(Number(acknowledged[1]), 18);
  assert.equal(
    line("on the promoted standby:"),
    "on the promoted standby: 18 of the 18 acknowledged purchases",
    stdout,
  );
  assert.match(line("ledger audit of the promoted standby:") ?? "", /: balanced \(/, stdout);
  assert.match(line("the service on the promoted standby:") ?? "", /: purchase ord_\S+$/, stdout);
  assert.match(stdout, /\$ pg_ctl stop -D \S+\/primary -m immediate\n/);
  assert.match(stdout, /\$ pg_basebackup .* -R\n/);
  assert.match(line("promotion:") ?? "", /^promotion: \d+\.\d\d s /);
});

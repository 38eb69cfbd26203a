// The restore drill of docs/deploy.md (scripts/restore-drill.ts), run whole: a primary with WAL
// archiving loaded by the service, pg_basebackup, writes on both sides of a recovery target time,
// the primary lost, the backup restored to that time from the archive, and on the restored cluster
// the ledger audit passes, everything before the target is there and nothing after it, and the
// service buys again on it. Debian's
// PostgreSQL (installed by the script with apt-get when missing): its pg_basebackup matches its server.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");

test("a base backup restored to a point in time brings back the books as they were then, and the ledger audit passes", async (t) => {
  const { stdout } = await run(process.execPath, ["scripts/restore-drill.ts"], {
    cwd: ROOT,
    timeout: 200_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`the drill failed: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
  });
  const lines = stdout.split("\n");
  const line = (prefix: string) => lines.find((l) => l.startsWith(prefix));
  t.diagnostic(`${line("restore drill:")}; ${line("base backup:")}; ${line("restore:")}`);
  assert.equal(lines.filter((l) => l.startsWith("PROBLEM")).length, 0, stdout);
  assert.ok(lines.includes("restore drill passed"), stdout);
  assert.match(
    line("ledger audit of the restored cluster:") ?? "",
    /: balanced \(\d+ accounts, \d+ transfers\)$/,
    stdout,
  );
  // Recovery stopped at the target (not at the archive's end), and the books say so.
  assert.match(
    line("PostgreSQL:") ?? "",
    /recovery stopping before commit of transaction \d+, time /,
    stdout,
  );
  assert.match(
    line("the service on the restored cluster:") ?? "",
    /: purchase ord_\S+; ledger audit balanced$/,
    "the service runs on the restored database again",
  );
  assert.match(
    line("9 orders, 3 partners") ?? "",
    /; 3 orders, 1 credit and 1 partner after it left out$/,
    stdout,
  );
  // The real tools ran: a streamed base backup, verified, and a restore from the archive.
  assert.match(stdout, /\$ pg_basebackup .* -X stream /);
  assert.match(stdout, /\$ pg_verifybackup /);
  assert.match(line("base backup:") ?? "", /^base backup: \d+\.\d\d s$/);
  assert.match(
    line("restore:") ?? "",
    /^restore: \d+\.\d\d s \(copy \d+\.\d\d s, WAL replay to the target and promotion \d+\.\d\d s\)$/,
  );
});

// Our ES2+ messages read by an implementation we did not write: osmocom pySim's ES2+ definitions
// (test/fixtures/pysim/README.md). A real run of our client against the SM-DP+ simulator, through
// a recording proxy, walks every function and recovery path we use and every notification the
// simulator pushes; Debian's python3 then decodes each request as pySim's SM-DP+ side would, each
// answer as pySim's client would, and each notification as pySim's operator side would.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { cancelProfileOrder } from "../src/carrier/es2plus/cancel-profile.ts";
import { Es2PlusClient } from "../src/carrier/es2plus/es2plus-client.ts";
import { importInventory } from "../src/carrier/es2plus/import-inventory.ts";
import { type Es2PlusDeps, orderProfile } from "../src/carrier/es2plus/order-profile.ts";
import { iccidRange } from "../src/lib/iccid-range.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import { ES2PLUS_SHAPES } from "../src/protocols/es2plus.ts";
import { createTestDatabase } from "./support/db.ts";
import { startNotificationRecorder, startRecordingProxy } from "./support/es2plus-recorder.ts";
import { REQUESTER_ID, SMDP_ADDRESS, startSmdpProcess } from "./support/smdp.ts";
import { makeCertificates } from "./support/tls.ts";
import { waitFor } from "./support/world.ts";

/** The pySim commit and files we validate with, and their SHA-256 (test/fixtures/pysim/README.md). */
const PYSIM_COMMIT = "597f1e0398bb81d6832dc92ee4dfdcada59d3d82";
const PYSIM_FILES = {
  "pySim/esim/es2p.py": "be1feb5ae514896d8dc4743a0eebbf23ef02c9e7732b467cdd22e4fcdac9c738",
  "pySim/esim/http_json_api.py": "b099ed6f26c198aa19b879eebcba5999030a0dded30fe44aaf550c88a3b611e0",
};
/** Where a clone of pySim is (any clone holding the commit); see the fixture's README. */
const PYSIM_GIT_DIR = process.env.PYSIM_GIT_DIR ?? "/work/.mirror/osmocom+pysim/repo";
const PYTHON = "/usr/bin/python3";
/**
 * pySim's code may not be committed here, and no package registry this machine reaches ships it: a
 * machine without a clone at PYSIM_GIT_DIR skips this one test, saying so, rather than failing the
 * whole suite. Where the clone exists (the development and CI machines) a wrong file still fails.
 */
const PYSIM_ABSENT = existsSync(PYSIM_GIT_DIR)
  ? false
  : `no pySim clone at PYSIM_GIT_DIR (${PYSIM_GIT_DIR}): see test/fixtures/pysim/README.md`;

/** pySim's two files at the pinned commit, in a directory of their own; fails when the clone lacks them. */
function pysimFiles(): string {
  const root = mkdtempSync(path.join(tmpdir(), "pysim-"));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, "pySim", "esim"), { recursive: true });
  for (const [file, sha256] of Object.entries(PYSIM_FILES)) {
    let text: Buffer;
    try {
      text = execFileSync("git", ["--git-dir", PYSIM_GIT_DIR, "show", `${PYSIM_COMMIT}:${file}`], {
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      throw new Error(
        `pySim ${PYSIM_COMMIT} is needed at PYSIM_GIT_DIR (${PYSIM_GIT_DIR}): ${(error as Error).message}`,
      );
    }
    assert.equal(createHash("sha256").update(text).digest("hex"), sha256, `${file} is pySim's, unmodified`);
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

const database = await createTestDatabase({ catalog: true });
const certs = makeCertificates();
const receiver = await startNotificationRecorder();
const smdp = await startSmdpProcess({
  databaseUrl: database.url,
  certs,
  callback_url: `${receiver.url}${ES2PLUS_SHAPES.handleDownloadProgressInfo.path}`,
  callback_token: "pysim-callback-token",
});
const proxy = await startRecordingProxy(smdp.url, certs);
const client = new Es2PlusClient({
  base_url: proxy.url,
  requester_id: REQUESTER_ID,
  cert: certs.client.cert,
  key: certs.client.key,
  ca: certs.ca,
  timeout_ms: 5_000,
});
after(() => client.close());
const deps: Es2PlusDeps = { pool: database.pool, client, smdp_address: SMDP_ADDRESS };

let block = 0;
/** One package's worth of ICCIDs at the SM-DP+ (unless told not to) and in our inventory. */
async function stock(count: number, at_smdp = true): Promise<{ package_id: string; iccids: string[] }> {
  const payload = `89448${String(++block).padStart(6, "0")}0000000`;
  const iccids = iccidRange(`${payload}${luhnCheckDigit(payload)}`, count);
  const package_id = `PYSIM-${block}`;
  if (at_smdp) await smdp.load(`PYSIM-TYPE-${block}`, iccids[0]!, count);
  await importInventory(database.pool, {
    external_package_id: package_id,
    profile_type: `PYSIM-TYPE-${block}`,
    first_iccid: iccids[0]!,
    count,
  });
  return { package_id, iccids };
}

async function order(reference: string, package_id: string): Promise<string> {
  const outcome = await orderProfile(deps, reference, package_id);
  return outcome.kind;
}

/** Runs `body` with the SM-DP+'s answers to `functions` dropped (done and committed, unanswered). */
async function dropping(functions: string[], body: () => Promise<unknown>) {
  await smdp.control({ drop_share: 1, functions });
  try {
    await body();
  } finally {
    await smdp.control({ drop_share: 0, functions: [] });
  }
}

/** Every function and recovery path our adapter takes, and every device event's notifications. */
async function walkTheProtocol(): Promise<void> {
  const happy = await stock(1);
  assert.equal(await order("pysim-happy", happy.package_id), "ok");
  for (const reason of ["3.3", "3.7"] as const) {
    await smdp.control({ download_taken_reason: reason });
    const lost_download = await stock(1);
    await dropping(["downloadOrder"], () => order(`pysim-lost-download-${reason}`, lost_download.package_id));
    assert.equal(await order(`pysim-lost-download-${reason}`, lost_download.package_id), "ok");
    const lost_confirm = await stock(1);
    await dropping(["confirmOrder"], () => order(`pysim-lost-confirm-${reason}`, lost_confirm.package_id));
    assert.equal(await order(`pysim-lost-confirm-${reason}`, lost_confirm.package_id), "ok");
  }
  await smdp.control({ download_taken_reason: "3.3" });
  // A refused ConfirmOrder (another profile holds our matching ID): CancelOrder with the matching
  // ID (8.2.6/3.10), then without it.
  const refused = await stock(1);
  await smdp.control({ fail_share: 1, functions: ["downloadOrder"] });
  await order("pysim-refused", refused.package_id).finally(() =>
    smdp.control({ fail_share: 0, functions: [] }),
  );
  const holder = await stock(1);
  await database.pool.query(
    `update smdp_sim.profiles set matching_id = (select matching_id from es2plus_profile_orders
      where reference = 'pysim-refused') where iccid = $1`,
    [holder.iccids[0]],
  );
  assert.equal(await order("pysim-refused", refused.package_id), "refused");
  assert.equal(await order("pysim-unknown-iccid", (await stock(1, false)).package_id), "refused");
  const cancelled = await stock(1);
  assert.equal(await order("pysim-cancelled", cancelled.package_id), "ok");
  const cancel = { reference: "pysim-cancelled", iccid: cancelled.iccids[0]! };
  assert.equal((await cancelProfileOrder(deps, cancel)).kind, "ok");
  await deviceEvents(happy.iccids[0]!);
}

/** Notifications: points 1-5 as successes, 1 and 2 as failures. */
async function deviceEvents(iccid: string): Promise<void> {
  for (const event of ["fail_eligibility", "fail_confirmation", "install", "delete"]) {
    assert.equal((await smdp.event(iccid, event)).status, 200, event);
  }
  await waitFor("the notifications", async () => receiver.notifications.length >= 7);
}

test("pySim reads every ES2+ request we send, every answer and notification the simulator sends, without a complaint", {
  skip: PYSIM_ABSENT,
}, async () => {
  const pysim = pysimFiles();
  await walkTheProtocol();
  const traffic = path.join(pysim, "traffic.json");
  // An HTTP 500 the test injected (fail_share) carries no ES2+ answer: only its request is read.
  const exchanges = proxy.exchanges.map((exchange) =>
    exchange.response?.status === 500 ? { ...exchange, response: null } : exchange,
  );
  writeFileSync(traffic, JSON.stringify({ exchanges, notifications: receiver.notifications }));
  const run = spawnSync(PYTHON, ["test/fixtures/pysim/validate_es2p.py", pysim, traffic], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  const summary = JSON.parse(run.stdout);
  assert.deepEqual(summary.errors, []);
  // What was checked: each function we call, its successes and the failures our recovery reads.
  assert.deepEqual(Object.keys(summary.requests).sort(), [
    "CancelOrder",
    "ConfirmOrder",
    "DownloadOrder",
    "ReleaseProfile",
  ]);
  const answers = summary.answers as Record<string, Record<string, number>>;
  for (const [fn, outcome] of [
    ["DownloadOrder", "Executed-Success"],
    ["DownloadOrder", "Failed 8.2.1/3.3"],
    ["DownloadOrder", "Failed 8.2.1/3.7"],
    ["DownloadOrder", "Failed 8.2.1/3.9"],
    ["ConfirmOrder", "Executed-Success"],
    ["ConfirmOrder", "Failed 8.2.1/3.5"],
    ["ConfirmOrder", "Failed 8.2.6/3.3"],
    ["ReleaseProfile", "Failed 8.2.1/3.5"],
    ["CancelOrder", "Executed-Success"],
    ["CancelOrder", "Failed 8.2.6/3.10"],
  ] as const) {
    assert.ok(answers[fn]?.[outcome], `${fn} ${outcome} was answered and read: ${JSON.stringify(answers)}`);
  }
  assert.deepEqual(Object.keys(summary.notifications.HandleDownloadProgressInfo).sort(), [
    "point 1 Executed-Success",
    "point 1 Failed 8.1/4.2",
    "point 2 Executed-Success",
    "point 2 Failed 8.2.7/3.8",
    "point 3 Executed-Success",
    "point 4 Executed-Success",
    "point 5 Executed-Success",
  ]);
});

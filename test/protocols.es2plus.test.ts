// Our client and our SM-DP+ simulator, each checked against the sourced ES2+ table
// (src/protocols/es2plus.ts) rather than against each other: the client's constants must
// say what the table says, and the simulator, driven over mutual TLS into each situation, must
// answer the table's code, shape, status and headers.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ADMIN_PROTOCOL,
  CONTENT_TYPE,
  ES2PLUS_PATHS,
  EXECUTION_STATUSES,
  STATUS,
} from "../src/carrier/es2plus/messages.ts";
import { iccidRange } from "../src/lib/iccid-range.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import {
  DOWNLOAD_ORDER_TAKEN,
  ES2PLUS_CODES,
  ES2PLUS_FRAMING,
  ES2PLUS_SHAPES,
  type Es2CodeName,
} from "../src/protocols/es2plus.ts";
import { createTestDatabase } from "./support/db.ts";
import { startNotificationRecorder } from "./support/es2plus-recorder.ts";
import { REQUESTER_ID, smdpRequest, startSmdpProcess } from "./support/smdp.ts";
import { makeCertificates } from "./support/tls.ts";
import { waitFor } from "./support/world.ts";

const database = await createTestDatabase();
const certs = makeCertificates();
const receiver = await startNotificationRecorder();
const smdp = await startSmdpProcess({
  databaseUrl: database.url,
  certs,
  callback_url: `${receiver.url}${ES2PLUS_SHAPES.handleDownloadProgressInfo.path}`,
  callback_token: "protocol-table-token",
});

test("the client's status codes are the table's, key for key", () => {
  for (const [name, code] of Object.entries(STATUS)) {
    const entry = ES2PLUS_CODES[name as Es2CodeName];
    assert.ok(entry, `STATUS.${name} has no entry in the protocol table`);
    assert.deepEqual(
      { subjectCode: code.subjectCode, reasonCode: code.reasonCode },
      { subjectCode: entry.subjectCode, reasonCode: entry.reasonCode },
      `STATUS.${name} (${entry.meaning}; ${entry.source})`,
    );
  }
  // DownloadOrder's "not available" in SGP.22's words and a vendor's: the client knows both.
  for (const name of DOWNLOAD_ORDER_TAKEN) assert.ok(name in STATUS, `STATUS.${name}`);
});

test("the client's paths, headers and execution statuses are the table's", () => {
  for (const [fn, path] of Object.entries(ES2PLUS_PATHS)) {
    assert.equal(path, ES2PLUS_SHAPES[fn as keyof typeof ES2PLUS_SHAPES].path, fn);
  }
  assert.ok(ADMIN_PROTOCOL.startsWith(ES2PLUS_FRAMING.admin_protocol_prefix));
  assert.ok(CONTENT_TYPE.startsWith(ES2PLUS_FRAMING.content_type_prefix));
  assert.deepEqual([...EXECUTION_STATUSES], [...ES2PLUS_FRAMING.execution_statuses]);
});

type Fn = Exclude<keyof typeof ES2PLUS_SHAPES, "handleDownloadProgressInfo">;
type Answered = { status: number; headers: Record<string, unknown>; body: Record<string, unknown> };

async function call(fn: Fn, fields: object, requester = REQUESTER_ID): Promise<Answered> {
  const header = { functionRequesterIdentifier: requester, functionCallIdentifier: `table-${Math.random()}` };
  const answer = await smdpRequest(
    smdp.url,
    certs,
    "POST",
    ES2PLUS_SHAPES[fn].path,
    { header, ...fields },
    certs.client,
    { "x-admin-protocol": ADMIN_PROTOCOL },
  );
  return answer as Answered;
}

function codeOf(answer: Answered): string {
  const execution = (answer.body.header as { functionExecutionStatus: Record<string, unknown> })
    .functionExecutionStatus;
  const data = execution.statusCodeData as { subjectCode: string; reasonCode: string } | undefined;
  return data ? `${execution.status} ${data.subjectCode}/${data.reasonCode}` : String(execution.status);
}

/** Every answer, failed or not, framed as the table says (HTTP status, headers); its code. */
function framed(fn: Fn, answer: Answered): string {
  assert.equal(answer.status, ES2PLUS_SHAPES[fn].http_status, fn);
  assert.ok(String(answer.headers["x-admin-protocol"]).startsWith(ES2PLUS_FRAMING.admin_protocol_prefix));
  assert.ok(String(answer.headers["content-type"]).startsWith(ES2PLUS_FRAMING.content_type_prefix));
  const code = codeOf(answer);
  const status = code.split(" ")[0]!;
  assert.ok(ES2PLUS_FRAMING.execution_statuses.includes(status as never), status);
  if (status === "Executed-Success") {
    for (const field of ES2PLUS_SHAPES[fn].output_mandatory)
      assert.ok(field in answer.body, `${fn}.${field}`);
  }
  return code;
}

/** One call, framed; its code. */
const answer = async (fn: Fn, fields: object, requester?: string) =>
  framed(fn, await call(fn, fields, requester));
const done = async (fn: Fn, fields: object) => assert.equal(await answer(fn, fields), "Executed-Success");

let block = 0;
async function load(count: number, profile_type = `TABLE-${++block}`): Promise<string[]> {
  const payload = `89447${String(++block).padStart(6, "0")}0000000`;
  const iccids = iccidRange(`${payload}${luhnCheckDigit(payload)}`, count);
  await smdp.load(profile_type, iccids[0]!, count);
  return iccids;
}

/** A released profile of its own. */
async function released(): Promise<string> {
  const [iccid] = await load(1);
  await done("downloadOrder", { iccid });
  await done("confirmOrder", { iccid, releaseFlag: true });
  return iccid!;
}

/** The codes the simulator answers, each from the situation the table's source names. */
const SITUATIONS: Record<Exclude<Es2CodeName, "executionError" | "busy">, () => Promise<string>> = {
  requesterUnknown: () => answer("releaseProfile", { iccid: "1" }, "stranger"),
  invalid: () => answer("downloadOrder", { iccid: "12" }),
  missing: async () => answer("confirmOrder", { iccid: (await load(1))[0] }),
  conditionalMissing: () => answer("downloadOrder", {}),
  iccidUnknown: () => answer("releaseProfile", { iccid: "8944999999999999990" }),
  iccidInUse: async () => {
    const [iccid] = await load(1);
    await done("downloadOrder", { iccid });
    return answer("downloadOrder", { iccid });
  },
  iccidUnavailable: async () => {
    const [iccid] = await load(1);
    await done("downloadOrder", { iccid });
    await smdp.control({ download_taken_reason: "3.7" });
    try {
      return await answer("downloadOrder", { iccid });
    } finally {
      await smdp.control({ download_taken_reason: "3.3" });
    }
  },
  invalidTransition: async () => answer("releaseProfile", { iccid: (await load(1))[0] }),
  profileTypeUnknown: () => answer("downloadOrder", { profileType: "NO-SUCH" }),
  profileTypeExhausted: async () => {
    await load(1, "TABLE-ONE");
    await done("downloadOrder", { profileType: "TABLE-ONE" });
    return answer("downloadOrder", { profileType: "TABLE-ONE" });
  },
  profileTypeMismatch: async () =>
    answer("downloadOrder", { iccid: (await load(1))[0], profileType: "OTHER" }),
  matchingIdInUse: async () => {
    const [first, second] = await load(2);
    for (const iccid of [first, second]) await done("downloadOrder", { iccid });
    await done("confirmOrder", { iccid: first, releaseFlag: true, matchingId: "TABLE-MATCH" });
    return answer("confirmOrder", { iccid: second, releaseFlag: true, matchingId: "TABLE-MATCH" });
  },
  matchingIdMismatch: async () => {
    const iccid = await released();
    return answer("cancelOrder", {
      iccid,
      matchingId: "NOT-ITS-ID",
      finalProfileStatusIndicator: "Unavailable",
    });
  },
  notEligible: () => notified("fail_eligibility"),
  confirmationRefused: () => notified("fail_confirmation"),
};

/** A device event's notification (HandleDownloadProgressInfo), in the table's shape; its point's code. */
async function notified(event: string): Promise<string> {
  const iccid = await released();
  assert.equal((await smdp.event(iccid, event)).status, 200);
  const notification = await waitFor("the notification", async () =>
    receiver.notifications.find((sent) => JSON.parse(sent.body).iccid.startsWith(iccid)),
  );
  assert.ok(notification.headers["x-admin-protocol"]?.startsWith(ES2PLUS_FRAMING.admin_protocol_prefix));
  const body = JSON.parse(notification.body);
  for (const field of ES2PLUS_SHAPES.handleDownloadProgressInfo.input_mandatory)
    assert.ok(field in body, field);
  assert.match(body.iccid, ES2PLUS_FRAMING.iccid);
  return codeOf({
    status: 200,
    headers: {},
    body: { header: { functionExecutionStatus: body.notificationPointStatus } },
  });
}

test("the SM-DP+ simulator answers each situation with the table's code, framed as the table says", async () => {
  for (const [name, situation] of Object.entries(SITUATIONS)) {
    const entry = ES2PLUS_CODES[name as Es2CodeName];
    assert.equal(
      await situation(),
      `Failed ${entry.subjectCode}/${entry.reasonCode}`,
      `${name}: ${entry.meaning} (${entry.source})`,
    );
  }
  // A code added to the table is one only the client reads, or it gets a situation here.
  const client_only = ["executionError", "busy"];
  assert.deepEqual(
    Object.keys(SITUATIONS).sort(),
    Object.keys(ES2PLUS_CODES)
      .filter((name) => !client_only.includes(name))
      .sort(),
  );
});

test("a DownloadOrder of a taken ICCID answers SGP.22's 8.2.1/3.3 unless told to answer as a 3.7 vendor", async () => {
  const [iccid] = await load(1);
  await done("downloadOrder", { iccid });
  assert.equal((await smdp.control({})).download_taken_reason, "3.3");
  assert.equal(await answer("downloadOrder", { iccid }), "Failed 8.2.1/3.3");
  await smdp.control({ download_taken_reason: "3.7" });
  try {
    assert.equal(await answer("downloadOrder", { iccid }), "Failed 8.2.1/3.7");
  } finally {
    await smdp.control({ download_taken_reason: "3.3" });
  }
});

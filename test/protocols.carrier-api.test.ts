// Our HTTP carrier protocol checked three ways against its table (src/protocols/carrier-api.ts),
// whose source is the carrier API document we publish: the table against the document, our adapter
// against the table (a peer over real HTTP answering each row exactly as the table says), and the
// carrier simulator, driven into each situation, against the table. Never client against simulator.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { HttpCarrier } from "../src/carrier/carrier-api/http-carrier.ts";
import { luhnCheckDigit } from "../src/lib/luhn.ts";
import {
  CARRIER_API_ANSWERS,
  CARRIER_API_OPERATIONS,
  type CarrierApiAnswer,
  type CarrierApiOperation,
} from "../src/protocols/carrier-api.ts";
import { createTestDatabase } from "./support/db.ts";
import { startSimulatorProcess } from "./support/simulator.ts";

const database = await createTestDatabase({ catalog: true });
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });

type Response = { content: Record<string, { schema: Record<string, unknown> }> };
type Operation = { operationId: string; responses: Record<string, Response> };
/** The document as published (checked against its builder by carrier-api.document.test.ts). */
const document = JSON.parse(readFileSync("docs/carrier-api.openapi.json", "utf8")) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

/** The `error` constant of a response's schema (following one $ref), or null when it has none. */
function errorConstant(schema: Record<string, unknown>): unknown {
  const ref = schema.$ref as string | undefined;
  const resolved = ref ? document.components.schemas[ref.split("/").at(-1)!]! : schema;
  const properties = resolved.properties as Record<string, { const?: unknown }> | undefined;
  return properties?.error?.const ?? null;
}

// --- our adapter against the table --------------------------------------------------------------

const ICCID = (() => {
  const payload = "894400000000000123";
  return `${payload}${luhnCheckDigit(payload)}`;
})();

/** A 200 of each operation as the document describes it, for the request asked. */
function okBody(operation: CarrierApiOperation, request: { reference?: string; iccid?: string }): object {
  const profile = { iccid: ICCID, smdp_address: "smdp.carrier.test", activation_code: "TABLE-1" };
  switch (operation) {
    case "provisionProfile":
      return profile;
    case "topUp":
      return { iccid: request.iccid };
    case "cancelProfile":
    case "cancelBundle":
      return { reference: request.reference, iccid: request.iccid };
    case "lookUpOutcome":
      return { kind: "profile", ...profile };
    case "esimState":
      return {
        iccid: ICCID,
        as_of: new Date().toISOString(),
        profile: { state: "released", installed_at: null, deleted_at: null },
        bundles: [],
      };
  }
}

/** A peer that answers every call with one row of the table, over real HTTP. */
let current: CarrierApiAnswer | null = null;
const peer = http.createServer((incoming, outgoing) => {
  const chunks: Buffer[] = [];
  incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
  incoming.on("end", () => {
    const row = current!;
    const text = Buffer.concat(chunks).toString("utf8");
    const request = text === "" ? {} : JSON.parse(text);
    const body =
      row.error === null
        ? okBody(row.operation, request)
        : {
            error: row.error,
            ...(row.error === "refused" || row.error === "unavailable" ? { reason: "table" } : {}),
          };
    outgoing.writeHead(row.status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
});
await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
after(() => new Promise((resolve) => peer.close(resolve)));
const adapter = new HttpCarrier({
  base_url: `http://127.0.0.1:${(peer.address() as AddressInfo).port}`,
  api_key: "table-key",
  timeout_ms: 5_000,
});

const provision = {
  reference: "ord_table",
  external_package_id: "PKG",
  data_mb: 1024,
  validity_days: 7,
  start_date: null,
  end_user_email: "someone@example.com",
};
const CALLS: Record<CarrierApiOperation, () => Promise<{ kind: string }>> = {
  provisionProfile: () => adapter.provisionProfile(provision),
  topUp: () =>
    adapter.topUp({
      reference: "top_table",
      iccid: ICCID,
      external_package_id: "PKG",
      data_mb: 1024,
      validity_days: 7,
      end_user_email: "someone@example.com",
    }),
  cancelProfile: () => adapter.cancelProfile({ reference: "ord_table", iccid: ICCID }),
  cancelBundle: () => adapter.cancelBundle({ reference: "top_table", iccid: ICCID }),
  lookUpOutcome: () => adapter.lookUpOutcome("ord_table"),
  esimState: () => adapter.esimState(ICCID),
};

test("the table is the published carrier API document: every operation and answer it relies on", () => {
  for (const [name, operation] of Object.entries(CARRIER_API_OPERATIONS)) {
    const published = document.paths[operation.path]?.[operation.method.toLowerCase()];
    assert.equal(published?.operationId, name, `${operation.method} ${operation.path}`);
  }
  for (const answer of CARRIER_API_ANSWERS) {
    const operation = CARRIER_API_OPERATIONS[answer.operation];
    const response =
      document.paths[operation.path]![operation.method.toLowerCase()]!.responses[String(answer.status)];
    assert.ok(response, answer.source);
    assert.equal(errorConstant(response.content["application/json"]!.schema), answer.error, answer.source);
  }
});

test("our adapter reads every answer of the table as the table says", async () => {
  for (const row of CARRIER_API_ANSWERS) {
    current = row;
    const outcome = await CALLS[row.operation]();
    assert.equal(outcome.kind, row.outcome, `${row.operation} ${row.status}: ${row.source}`);
  }
});

// --- the carrier simulator against the table ----------------------------------------------------

async function ask(
  operation: CarrierApiOperation,
  params: { reference?: string; iccid?: string; body?: object },
  key = simulator.apiKey,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { method, path } = CARRIER_API_OPERATIONS[operation];
  const url = path.replace("{reference}", params.reference ?? "").replace("{iccid}", params.iccid ?? "");
  const response = await fetch(`${simulator.url}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(method === "POST" ? { "content-type": "application/json" } : {}),
    },
    body: method === "POST" ? JSON.stringify(params.body ?? {}) : undefined,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const body = (reference: string, end_user_email = "someone@example.com") => ({
  ...provision,
  external_package_id: "CARRIER-FR-1GB-7D",
  reference,
  end_user_email,
});

/** One situation per row of the table the simulator answers; the key is "<operation> <status>". */
async function situations(): Promise<
  Record<string, () => Promise<{ status: number; body: Record<string, unknown> }>>
> {
  const made = await ask("provisionProfile", { body: body("ord_sim_table") });
  const iccid = made.body.iccid as string;
  const { start_date: _, ...topup_fields } = body("top_sim_table");
  const topup = { ...topup_fields, iccid };
  const installed = (await ask("provisionProfile", { body: body("ord_sim_installed") })).body.iccid as string;
  await simulator.simulate(installed, { event: "install" });
  const down = async <T>(work: () => Promise<T>) => {
    await simulator.control({ down: true });
    try {
      return await work();
    } finally {
      await simulator.control({ down: false });
    }
  };
  const all: Record<string, () => Promise<{ status: number; body: Record<string, unknown> }>> = {
    "provisionProfile 200": async () => made,
    "provisionProfile 422": () =>
      ask("provisionProfile", { body: body("ord_sim_declined", "decline@carrier.test") }),
    "provisionProfile 503": () =>
      ask("provisionProfile", { body: body("ord_sim_unav", "unavailable@carrier.test") }),
    "topUp 200": () => ask("topUp", { body: topup }),
    "topUp 422": () =>
      ask("topUp", {
        body: { ...topup, reference: "top_sim_declined", end_user_email: "decline@carrier.test" },
      }),
    "topUp 503": () =>
      ask("topUp", {
        body: { ...topup, reference: "top_sim_unav", end_user_email: "unavailable@carrier.test" },
      }),
    "lookUpOutcome 200": () => ask("lookUpOutcome", { reference: "ord_sim_table" }),
    "lookUpOutcome 422": () => ask("lookUpOutcome", { reference: "ord_sim_declined" }),
    "lookUpOutcome 404": () => ask("lookUpOutcome", { reference: "ord_sim_never" }),
    "lookUpOutcome 503": () => down(() => ask("lookUpOutcome", { reference: "ord_sim_table" })),
    "esimState 200": () => ask("esimState", { iccid }),
    "esimState 404": () => ask("esimState", { iccid: ICCID }),
    "esimState 503": () => down(() => ask("esimState", { iccid })),
    "cancelBundle 200": () => ask("cancelBundle", { body: { reference: "top_sim_table", iccid } }),
    "cancelBundle 422": () => ask("cancelBundle", { body: { reference: "top_sim_never", iccid } }),
    "cancelBundle 503": () =>
      down(() => ask("cancelBundle", { body: { reference: "top_sim_table", iccid } })),
    "cancelProfile 422": () =>
      ask("cancelProfile", { body: { reference: "ord_sim_installed", iccid: installed } }),
    "cancelProfile 503": () =>
      down(() => ask("cancelProfile", { body: { reference: "ord_sim_table", iccid } })),
    "cancelProfile 200": () => ask("cancelProfile", { body: { reference: "ord_sim_table", iccid } }),
  };
  for (const operation of Object.keys(CARRIER_API_OPERATIONS) as CarrierApiOperation[]) {
    all[`${operation} 401`] = () =>
      ask(operation, { reference: "x", iccid, body: body("ord_sim_key") }, "wrong-key");
  }
  return all;
}

test("the carrier simulator answers each situation with the table's status and body", async () => {
  const all = await situations();
  for (const [key, situation] of Object.entries(all)) {
    const [operation, status] = key.split(" ") as [CarrierApiOperation, string];
    const row = CARRIER_API_ANSWERS.find(
      (answer) => answer.operation === operation && String(answer.status) === status,
    );
    assert.ok(row, `${key} is in the table`);
    const answer = await situation();
    assert.equal(answer.status, row.status, `${key}: ${JSON.stringify(answer.body)}`);
    if (row.error === null) {
      for (const field of CARRIER_API_OPERATIONS[operation].ok_fields)
        assert.ok(field in answer.body, `${key}.${field}`);
    } else {
      assert.equal(answer.body.error, row.error, `${key}: ${row.source}`);
    }
  }
  // Every row has its situation, but the one the simulator never answers: a refused eSIM pull
  // (our adapter still reads it, above).
  const never = ["esimState 422"];
  assert.deepEqual(
    CARRIER_API_ANSWERS.map((row) => `${row.operation} ${row.status}`)
      .filter((key) => !never.includes(key))
      .sort(),
    Object.keys(all).sort(),
  );
});

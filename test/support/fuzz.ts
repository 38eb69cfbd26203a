// Fuzzing the HTTP API from the OpenAPI document it serves (issue 5). Shared by the short suite
// (test/fuzz.test.ts) and the long run (scripts/fuzz.ts), so it has no node:test dependency.
// The engine is test/support/fuzz/, one file per part; this is its public face.
//
// What it does:
// - reads GET /openapi.json from the app and turns every operation's parameter and body schemas
//   into fast-check arbitraries (fuzz/arbitraries.ts: the JSON Schema subset our TypeBox schemas use);
// - mixes valid requests (a real funded partner, real carts, a real ICCID and order bought from
//   the carrier simulator: fuzz/fixtures.ts) with mutated ones (fuzz/mutations.ts: wrong types,
//   missing and extra fields, huge and odd strings, raw bytes, bad JSON, wrong content types, odd
//   headers, paths, queries and methods, bad credentials);
// - sends each over a real TCP connection as raw bytes (fuzz/raw-http.ts, so duplicate headers,
//   `..` and invalid UTF-8 reach the server as sent) and checks every response (fuzz/checker.ts):
//   no 500 ever, 5xx only where the carrier legitimately answers them, problem+json with a
//   documented code, a body that matches the route's response schema, and no change to the
//   business tables for a rejected request.
export { changedTables, snapshotTables } from "./fuzz/checker.ts";
export { startFuzzEnvironment } from "./fuzz/environment.ts";
export type { FuzzReport, Outcome } from "./fuzz/execute.ts";
export { type Operation, operationsOf } from "./fuzz/openapi.ts";
export { formatReport, runFuzz } from "./fuzz/run.ts";
export type { FuzzEnvironment } from "./fuzz/state.ts";

// Fuzzing the HTTP API from the OpenAPI document it serves (issue 5). Shared by the short suite
// (test/fuzz.test.ts) and the long run (scripts/fuzz.ts), so it has no node:test dependency.
//
// What it does:
// - reads GET /openapi.json from the app and turns every operation's parameter and body schemas
//   into fast-check arbitraries (schemaArbitrary: the JSON Schema subset our TypeBox schemas use);
// - mixes valid requests (a real funded partner, real carts, a real ICCID and order bought from
//   the carrier simulator) with mutated ones (wrong types, missing and extra fields, huge and odd
//   strings, raw bytes, bad JSON, wrong content types, odd headers, paths, queries and methods,
//   bad credentials);
// - sends each over a real TCP connection as raw bytes (so duplicate headers, `..` and invalid
//   UTF-8 reach the server as sent) and checks every response: no 500 ever, 5xx only where the
//   carrier legitimately answers them, problem+json with a documented code, a body that matches
//   the route's response schema, and no change to the business tables for a rejected request.
import { randomBytes, randomUUID } from "node:crypto";
import net from "node:net";
import * as ajv2020 from "ajv/dist/2020.js";
import ajvFormatsModule from "ajv-formats";
import fc from "fast-check";
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type pg from "pg";
import { HttpCarrier } from "../../src/carrier/http-carrier.ts";
import { luhnCheckDigit } from "../../src/carrier/luhn.ts";
import { startSimulator } from "../../src/carrier/simulator/server.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { createKysely } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";
import { generateApiKey } from "../../src/partners/api-keys.ts";
import { type BuildOptions, buildApp } from "../../src/server/app.ts";
import type { AppContext } from "../../src/shared/context.ts";
import { ERROR_CODES } from "../../src/shared/errors.ts";
import type { App } from "../../src/shared/http-types.ts";
import { ensureOperatorAccounts } from "../../src/wallet/ledger.sql.ts";

export const FUZZ_ADMIN_TOKEN = "fuzz-admin-token-0123456789abcdef";
/** Per request: a hung request is a failure, not a hung run. */
const REQUEST_TIMEOUT_MS = 20_000;
/** Longest string kept in a failure report. */
const REPORT_CHARS = 400;
/** Failure examples kept per distinct failure. */
const EXAMPLES_PER_FAILURE = 3;

// ---------------------------------------------------------------------------------------------
// The OpenAPI document

export type JsonSchema = Record<string, any>;

export type Parameter = {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: JsonSchema;
};

export type Operation = {
  /** `METHOD /path/{template}` */
  id: string;
  operationId: string | null;
  method: string;
  path: string;
  area: "partner" | "admin" | "service";
  /** False for the hidden service routes (/metrics, /openapi.json, /docs): no schemas to check. */
  documented: boolean;
  params: Parameter[];
  body: { required: boolean; schema: JsonSchema } | null;
  responses: Record<string, any>;
};

/** Served but left out of the document on purpose (`hide: true`). */
const HIDDEN_SERVICE_ROUTES = ["/metrics", "/openapi.json", "/docs"];
const HTTP_METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];

export function areaOf(path: string): Operation["area"] {
  if (path.startsWith("/v1/")) return "partner";
  if (path.startsWith("/admin/")) return "admin";
  return "service";
}

export function operationsOf(doc: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const params: Parameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => ({
        name: p.name,
        in: p.in,
        required: p.required === true,
        schema: p.schema ?? {},
      }));
      const json = op.requestBody?.content?.["application/json"];
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        operationId: op.operationId ?? null,
        method: method.toUpperCase(),
        path,
        area: areaOf(path),
        documented: true,
        params,
        body: json ? { required: op.requestBody.required === true, schema: json.schema ?? {} } : null,
        responses: op.responses ?? {},
      });
    }
  }
  for (const path of HIDDEN_SERVICE_ROUTES) {
    operations.push({
      id: `GET ${path}`,
      operationId: null,
      method: "GET",
      path,
      area: "service",
      documented: false,
      params: [],
      body: null,
      responses: {},
    });
  }
  return operations;
}

/** `/v1/orders/:orderID` (Fastify) to `/v1/orders/{orderID}` (OpenAPI). */
export function openapiPath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

// ---------------------------------------------------------------------------------------------
// Values resolved when a request is sent, against what exists by then

/** A value of a kind (a cart key, an ICCID...) picked from the live fixtures when the request is sent. */
export class Ref {
  readonly kind: RefKind;
  readonly n: number;
  readonly field: string | undefined;
  constructor(kind: RefKind, n: number, field?: string) {
    this.kind = kind;
    this.n = n;
    this.field = field;
  }
}

/** A long string, materialized only when the request is sent. */
export class Huge {
  readonly length: number;
  readonly unit: string;
  constructor(length: number, unit: string) {
    this.length = length;
    this.unit = unit;
  }
  toString(): string {
    return this.unit.repeat(Math.ceil(this.length / this.unit.length)).slice(0, this.length);
  }
}

/** A value (a Ref, typically) with text appended once it is resolved. */
export class Appended {
  readonly base: unknown;
  readonly suffix: string;
  constructor(base: unknown, suffix: string) {
    this.base = base;
    this.suffix = suffix;
  }
}

/** A path segment sent exactly as given, not percent-encoded. */
export class RawSegment {
  readonly raw: string;
  constructor(raw: string) {
    this.raw = raw;
  }
}

export type RefKind =
  | "package_id"
  | "external_package_id"
  | "topup_choice"
  | "cart_key"
  | "order_id"
  | "iccid"
  | "partner_id"
  | "key_id"
  | "destination_code"
  | "email"
  | "phone"
  | "person_name"
  | "client_reference"
  | "cursor"
  | "idempotency_key"
  | "credit_reference"
  | "etag";

/** Body, path, query and header fields whose valid values come from the fixtures. */
const FIELD_REFS: Record<string, RefKind> = {
  package_id: "package_id",
  external_package_id: "external_package_id",
  cart_key: "cart_key",
  orderID: "order_id",
  iccid: "iccid",
  partner_id: "partner_id",
  key_id: "key_id",
  destination_code: "destination_code",
  email: "email",
  phone: "phone",
  first_name: "person_name",
  last_name: "person_name",
  client_reference: "client_reference",
  cursor: "cursor",
  "idempotency-key": "idempotency_key",
  "if-none-match": "etag",
  reference: "credit_reference",
};

// ---------------------------------------------------------------------------------------------
// JSON Schema -> fast-check arbitrary

/** Generation strips lookarounds fast-check cannot generate; the full pattern still filters. */
function generablePattern(pattern: string): string {
  return pattern.replace(/\(\?[=!][^()]*\)/g, "");
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number = schema.maxLength ?? 64;
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength;
  if (schema.format === "date") {
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    return fc.oneof(
      fc
        .integer({ min: -3, max: 200 })
        .map((days) => new Date(today + days * 86_400_000).toISOString().slice(0, 10)),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
      fc.constantFrom("2026-02-30", "2026-13-01", "0000-01-01", "9999-12-31"),
    );
  }
  if (schema.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === "email") {
    return fc
      .oneof(fc.constantFrom("ana@example.com", "ops+tag@example.org"), fc.emailAddress())
      .filter(fits);
  }
  if (schema.format === "uuid") return fc.uuid();
  if (typeof schema.pattern === "string") {
    const full = new RegExp(schema.pattern, "u");
    try {
      return fc
        .stringMatching(new RegExp(generablePattern(schema.pattern)))
        .filter((s) => full.test(s) && fits(s));
    } catch {
      // A pattern fast-check cannot generate from: plain strings, which the server will mostly refuse.
    }
  }
  const bounded = { minLength, maxLength: Math.min(maxLength, Math.max(minLength, 40)) };
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ ...bounded, unit: "grapheme-ascii" }) },
    { weight: 1, arbitrary: fc.string({ ...bounded, unit: "grapheme" }) },
    { weight: 1, arbitrary: fc.constant("x".repeat(maxLength <= 10_000 ? maxLength : minLength)) },
  );
}

function integerArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -(2 ** 31);
  const max = schema.maximum ?? 2 ** 31;
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
  );
}

function objectArbitrary(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, JsonSchema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) model[name] = fieldArbitrary(name, property);
  const record = fc.record(model, { requiredKeys: required.filter((name) => name in model) }) as fc.Arbitrary<
    Record<string, unknown>
  >;
  // An ICCID with a package offered for it: top-ups need the three to agree to reach the carrier.
  if (["iccid", "package_id", "external_package_id"].every((name) => name in properties)) {
    return fc.tuple(record, fc.nat(), fc.boolean()).map(([value, n, coherent]) =>
      coherent
        ? {
            ...value,
            iccid: new Ref("iccid", n % 14),
            package_id: new Ref("topup_choice", n, "package_id"),
            external_package_id: new Ref("topup_choice", n, "external_package_id"),
          }
        : value,
    );
  }
  return record;
}

/** A valid value for `schema` (as far as the schema says), generated from the subset we use. */
export function schemaArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return fc.oneof(...union.map((s: JsonSchema) => schemaArbitrary(s)));
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((type: string) => schemaArbitrary({ ...schema, type })));
  }
  switch (schema.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return integerArbitrary(schema);
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
    case "string":
      return stringArbitrary(schema);
    case "array":
      return fc.array(schemaArbitrary(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case "object":
      return objectArbitrary(schema);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A field: mostly a live fixture value when the field names one, else from its schema. */
function fieldArbitrary(name: string, schema: JsonSchema): fc.Arbitrary<unknown> {
  const kind = FIELD_REFS[name];
  const generated = schemaArbitrary(schema);
  if (!kind) return generated;
  // A nullable field stays nullable: null is valid and must be exercised too.
  const nullable = (schema.anyOf ?? []).some((s: JsonSchema) => s.type === "null");
  return fc.oneof(
    { weight: 12, arbitrary: fc.nat().map((n) => new Ref(kind, n)) },
    { weight: 2, arbitrary: generated },
    ...(nullable ? [{ weight: 1, arbitrary: fc.constant(null) }] : []),
  );
}

// ---------------------------------------------------------------------------------------------
// Requests: a plan, valid or mutated, resolved and sent when its turn comes

export type AuthKind =
  | "main"
  | "main_x_api_key"
  | "other"
  | "poor"
  | "none"
  | "malformed"
  | "revoked"
  | "wrong_env"
  | "unknown"
  | "duplicate"
  | "admin"
  | "admin_wrong"
  | "admin_partner_key"
  | "anonymous";

export const VALID_PARTNER_AUTH: readonly AuthKind[] = ["main", "main_x_api_key", "other", "poor"];
export const INVALID_PARTNER_AUTH: readonly AuthKind[] = [
  "none",
  "malformed",
  "revoked",
  "wrong_env",
  "unknown",
];

export type Body =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  /** Bytes as given: bad JSON, raw invalid UTF-8, a body spliced around raw bytes. */
  | { kind: "raw"; bytes: string | Uint8Array | Huge };

export type Plan = {
  op: Operation;
  method: string;
  pathParams: Record<string, unknown>;
  /** Replaces the whole request-target (odd paths that no template produces). */
  target: string | null;
  query: Array<[string, unknown]>;
  /** Appended to the query string as is. */
  rawQuery: string;
  headers: Array<[string, unknown]>;
  body: Body;
  /** null: no Content-Type header. */
  contentType: string | null;
  auth: AuthKind;
  /** "valid" or the mutation applied, for the summary. */
  mutation: string;
  /** Send the n-th earlier POST again, exactly, instead (when there is one). */
  replay: number | null;
};

function authArbitrary(op: Operation): fc.Arbitrary<AuthKind> {
  if (op.area === "partner") {
    return fc.oneof(
      { weight: 14, arbitrary: fc.constant<AuthKind>("main") },
      { weight: 2, arbitrary: fc.constant<AuthKind>("main_x_api_key") },
      { weight: 2, arbitrary: fc.constant<AuthKind>("other") },
      { weight: 1, arbitrary: fc.constant<AuthKind>("poor") },
    );
  }
  if (op.area === "admin") return fc.constant<AuthKind>("admin");
  return fc.constant<AuthKind>("anonymous");
}

function badAuthArbitrary(op: Operation): fc.Arbitrary<AuthKind> {
  if (op.area === "admin")
    return fc.constantFrom<AuthKind>("none", "admin_wrong", "admin_partner_key", "duplicate");
  return fc.constantFrom<AuthKind>(...INVALID_PARTNER_AUTH, "duplicate");
}

function validPlanArbitrary(op: Operation): fc.Arbitrary<Plan> {
  const pathParams = op.params.filter((p) => p.in === "path");
  const queryParams = op.params.filter((p) => p.in === "query");
  const headerParams = op.params.filter((p) => p.in === "header");
  const pathArb = fc.record(
    Object.fromEntries(pathParams.map((p) => [p.name, fieldArbitrary(p.name, p.schema)])),
  );
  const optional = (p: Parameter): fc.Arbitrary<[string, unknown] | null> => {
    const entry = fieldArbitrary(p.name, p.schema).map((v) => [p.name, v] as [string, unknown]);
    return p.required ? entry : fc.option(entry, { nil: null, freq: 3 });
  };
  const queryArb = fc.tuple(...queryParams.map(optional));
  // A GET may be conditional: If-None-Match with an ETag seen earlier (304 when it is current).
  const conditional: Parameter[] =
    op.method === "GET"
      ? [{ name: "if-none-match", in: "header", required: false, schema: { type: "string" } }]
      : [];
  const headerArb = fc.tuple(...[...headerParams, ...conditional].map(optional));
  const bodyArb: fc.Arbitrary<Body> = op.body
    ? schemaArbitrary(op.body.schema).map((value) => ({ kind: "json" as const, value }))
    : fc.constant({ kind: "none" as const });
  return fc
    .record({ path: pathArb, query: queryArb, headers: headerArb, body: bodyArb, auth: authArbitrary(op) })
    .map(
      (parts): Plan => ({
        op,
        method: op.method,
        pathParams: parts.path,
        target: null,
        query: parts.query.filter((q): q is [string, unknown] => q !== null),
        rawQuery: "",
        headers: parts.headers.filter((h): h is [string, unknown] => h !== null),
        body: parts.body,
        contentType: parts.body.kind === "none" ? null : "application/json",
        auth: parts.auth,
        mutation: "valid",
        replay: null,
      }),
    );
}

const UNICODE_SAMPLES = [
  "🚀",
  "🇫🇷🏳️‍🌈👩🏽‍💻",
  "مرحبا بالعالم",
  "\u202Eevil\u202C",
  "a\u0000b",
  "\u0000",
  "\uFEFFx",
  "e\u0301\u0301\u0301",
  "Z̴̧̛̙a̷l̸g̶o",
  "\u2028\u2029",
  "\uD800",
  "\uDFFFx",
  "x\uD83D",
  "\u0007\u001b[31m",
  "𝕬𝖇𝖈",
  "ｆｕｌｌ",
  "\u00a0",
  " ",
  "",
  "null",
  "../../etc/passwd",
  "'; drop table orders;--",
  "%00",
  "$" + "{jndi:ldap://x}",
  "<script>alert(1)</script>",
  "\\",
  '"',
];

/** Byte sequences that are not UTF-8: a lone surrogate, an overlong NUL, a stray continuation, a cut sequence. */
const RAW_BYTES = [
  Uint8Array.of(0xed, 0xa0, 0x80),
  Uint8Array.of(0xc0, 0x80),
  Uint8Array.of(0x80),
  Uint8Array.of(0xff, 0xfe),
  Uint8Array.of(0xf0, 0x9f, 0x9a),
  Uint8Array.of(0x00),
];

const BAD_JSON = [
  "",
  "{",
  "}",
  '{"a":',
  "nul",
  "NaN",
  "[1,]",
  "{'a':1}",
  "\uFEFF{}",
  '{"a":1}garbage',
  '{"a":1}{"b":2}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  "1e999",
  '"a string"',
  '{"a":"\\u00"}',
  '{"a":"\\x41"}',
  " ",
  '{"a" 1}',
  "true",
  "-0",
  "[]",
  "null",
];

const CONTENT_TYPES = [
  null,
  "text/plain",
  "application/xml",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "APPLICATION/JSON",
  'application/json;charset="utf-8"',
  "application/jsonx",
  "application/problem+json",
  "",
  "*/*",
  "application/json, text/plain",
  "json",
  "application/vnd.api+json",
];

const ODD_SEGMENTS = [
  "a%2Fb",
  "..",
  "%2e%2e",
  ".",
  "%00",
  "%zz",
  "%",
  "%ED%A0%80",
  "%F0%9F%9A%80",
  "%20",
  "",
  "%3F",
  "%23",
  "..%2F..%2Fadmin",
  "%5C",
  "x".repeat(101),
  "x".repeat(201),
  "9".repeat(300),
  "x".repeat(5000),
  "8901260000000000000",
  "%E2%80%AE",
];

const REQUEST_IDS = [
  "a".repeat(129),
  "a".repeat(1000),
  "a".repeat(10_000),
  "a".repeat(20_000),
  "with space",
  "ünï",
  "",
];

const IDEMPOTENCY_KEYS = [
  "",
  " ",
  " a",
  "a ",
  "a".repeat(256),
  "a".repeat(600),
  '"unterminated',
  '"a\\x"',
  '"a";p=1',
  "ключ",
  "\t",
  '""',
  "a\u007f",
  "a\u0000b",
];

const WRONG_TYPES: unknown[] = [0, -1, 1.5, 1e308, true, false, null, [], ["x"], {}, { a: 1 }, "", "0"];

function pick<T>(items: readonly T[]): fc.Arbitrary<T> {
  return fc.constantFrom(...items);
}

/** Top-level body fields, for the field mutations. */
function bodyFields(plan: Plan): string[] {
  const schema = plan.op.body?.schema;
  return Object.keys(schema?.properties ?? {});
}

function withBodyValue(
  plan: Plan,
  mutate: (value: Record<string, unknown>) => unknown,
  mutation: string,
): Plan {
  const value = plan.body.kind === "json" && isObject(plan.body.value) ? { ...plan.body.value } : {};
  return { ...plan, body: { kind: "json", value: mutate(value) }, mutation };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    !(value instanceof Ref) &&
    !(value instanceof Appended) &&
    !(value instanceof Huge)
  );
}

const SPLICE = "FUZZRAWSPLICE";

type Weighted = { weight: number; arbitrary: fc.Arbitrary<Plan> };

/** Where a text mutation lands: a top-level body field, a path parameter or a query parameter. */
type Location = { in: "body" | "path" | "query"; name: string };

function locations(plan: Plan): Location[] {
  return [
    ...bodyFields(plan).map((name): Location => ({ in: "body", name })),
    ...Object.keys(plan.pathParams).map((name): Location => ({ in: "path", name })),
    ...plan.op.params.filter((p) => p.in === "query").map((p): Location => ({ in: "query", name: p.name })),
  ];
}

/** The plan with `location` set to `make(current value)`. */
function setAt(plan: Plan, location: Location, make: (current: unknown) => unknown, mutation: string): Plan {
  if (location.in === "body")
    return withBodyValue(plan, (v) => ({ ...v, [location.name]: make(v[location.name]) }), mutation);
  if (location.in === "path") {
    return {
      ...plan,
      pathParams: { ...plan.pathParams, [location.name]: make(plan.pathParams[location.name]) },
      mutation,
    };
  }
  const current = plan.query.find(([name]) => name === location.name)?.[1];
  const query = plan.query.filter(([name]) => name !== location.name);
  return { ...plan, query: [...query, [location.name, make(current)]], mutation };
}

const CONTROL_CHARACTERS = ["\u0000", "a\u0000b", "\u0001", "\u001f", "\u007f", "\t", "\r\n", "\u0085"];

function bodyMutations(plan: Plan): Weighted[] {
  const fields = bodyFields(plan);
  if (!plan.op.body || fields.length === 0) {
    return [
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.jsonValue(), pick(["application/json", "text/plain", "application/xml"]))
          .map(([value, contentType]) => ({
            ...plan,
            body: { kind: "json" as const, value },
            contentType,
            mutation: "body_on_bodyless",
          })),
      },
    ];
  }
  const required: string[] = plan.op.body.schema.required ?? [];
  const out: Weighted[] = [];
  if (required.length > 0) {
    out.push({
      weight: 2,
      arbitrary: pick(required).map((name) =>
        withBodyValue(
          plan,
          (v) => {
            delete v[name];
            return v;
          },
          "missing_field",
        ),
      ),
    });
  }
  out.push(
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.oneof(pick(["__proto__", "constructor", "extra", "PACKAGE_ID", ""]), fc.string()),
          fc.jsonValue(),
        )
        .map(([name, value]) => withBodyValue(plan, (v) => ({ ...v, [name]: value }), "extra_field")),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(pick(fields), pick(WRONG_TYPES))
        .map(([name, value]) => withBodyValue(plan, (v) => ({ ...v, [name]: value }), "wrong_type")),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          pick(fields),
          pick([1000, 60_000, 65_000, 65_400, 65_536, 70_000, 200_000]),
          pick(["x", "é", "🚀"]),
        )
        .map(([name, length, unit]) =>
          withBodyValue(plan, (v) => ({ ...v, [name]: new Huge(length, unit) }), "huge_string"),
        ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(pick(fields), pick(RAW_BYTES)).map(([name, bytes]) => {
        const spliced = withBodyValue(plan, (v) => ({ ...v, [name]: SPLICE }), "raw_bytes");
        return { ...spliced, body: { kind: "raw" as const, bytes: spliceBytes(spliced.body, bytes) } };
      }),
    },
    {
      weight: 1,
      arbitrary: pick<unknown>([[], [{}], "x", 1, null, true]).map((value) => ({
        ...plan,
        body: { kind: "json" as const, value },
        mutation: "not_object",
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          pick(BAD_JSON),
          fc.constant("[".repeat(30_000) + "]".repeat(30_000)),
          fc.constant('{"a":'.repeat(5_000)),
          pick(fields).map((name) => `{"${name}":"a","${name}":"b"}`),
        )
        .map((bytes) => ({ ...plan, body: { kind: "raw" as const, bytes }, mutation: "bad_json" })),
    },
    {
      weight: 2,
      arbitrary: pick(CONTENT_TYPES).map((contentType) => ({
        ...plan,
        contentType,
        mutation: "content_type",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({
        ...plan,
        body: { kind: "none" as const },
        contentType: null,
        mutation: "no_body",
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constant({
        ...plan,
        body: { kind: "none" as const },
        contentType: "application/json",
        mutation: "empty_json_body",
      }),
    },
  );
  return out;
}

function textMutations(plan: Plan): Weighted[] {
  const where = locations(plan);
  if (where.length === 0) return [];
  return [
    {
      weight: 3,
      arbitrary: fc
        .tuple(pick(where), pick(UNICODE_SAMPLES), fc.boolean())
        .map(([location, text, alone]) =>
          setAt(plan, location, (v) => (alone ? text : new Appended(v ?? "", text)), "unicode"),
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(pick(where), pick(CONTROL_CHARACTERS), fc.boolean())
        .map(([location, text, alone]) =>
          setAt(plan, location, (v) => (alone ? text : new Appended(v ?? "", text)), "control_chars"),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          pick(where.filter((l) => l.in !== "body").length ? where.filter((l) => l.in !== "body") : where),
          pick([129, 201, 1000, 6000]),
        )
        .map(([location, length]) => setAt(plan, location, () => new Huge(length, "7"), "long_text")),
    },
  ];
}

function requestMutations(plan: Plan): Weighted[] {
  const out: Weighted[] = [
    {
      weight: 3,
      arbitrary: fc
        .oneof(
          pick(REQUEST_IDS).map((v): Array<[string, unknown]> => [["x-request-id", v]]),
          pick(IDEMPOTENCY_KEYS).map((v): Array<[string, unknown]> => [["idempotency-key", v]]),
          fc.constant<Array<[string, unknown]>>([
            ["idempotency-key", "dup-a"],
            ["idempotency-key", "dup-b"],
          ]),
          fc.constant<Array<[string, unknown]>>([
            ["x-request-id", "one"],
            ["x-request-id", "two"],
          ]),
          fc.constant<Array<[string, unknown]>>([["content-length", "abc"]]),
          fc.constant<Array<[string, unknown]>>([["transfer-encoding", "chunked"]]),
          fc.constant<Array<[string, unknown]>>([["x-bad", "a\u0000b"]]),
          fc.constant<Array<[string, unknown]>>([["accept", "application/xml"]]),
          fc.constant<Array<[string, unknown]>>([["if-none-match", '"x", W/"y", *']]),
          fc.nat().map((n): Array<[string, unknown]> => [["if-none-match", new Ref("etag", n)]]),
          fc.constant<Array<[string, unknown]>>(
            Array.from({ length: 150 }, (_, i): [string, unknown] => [`x-fuzz-${i}`, "v"]),
          ),
          fc.constant<Array<[string, unknown]>>([["x-api-key", "garbage"]]),
        )
        .map((headers) => ({ ...plan, headers: [...plan.headers, ...headers], mutation: "odd_header" })),
    },
  ];
  const pathNames = Object.keys(plan.pathParams);
  if (pathNames.length > 0) {
    out.push({
      weight: 2,
      arbitrary: fc.tuple(pick(pathNames), pick(ODD_SEGMENTS)).map(([name, raw]) => ({
        ...plan,
        pathParams: { ...plan.pathParams, [name]: new RawSegment(raw) },
        mutation: "odd_path_param",
      })),
    });
  }
  out.push({
    weight: 2,
    arbitrary: pick([
      (p: string) => `${p}/`,
      (p: string) => `/${p}`,
      (p: string) => p.toUpperCase(),
      (p: string) => p.replace(/^\/(v1|admin)\//, "/$1/./"),
      (p: string) => p.replace(/^\/(v1|admin)\//, "/$1/x/../"),
      (p: string) => `${p};jsessionid=1`,
      (p: string) => `${p}#fragment`,
      (p: string) => `http://127.0.0.1${p}`,
      (p: string) => p.replaceAll("/", "%2F"),
      (_p: string) => "*",
      (p: string) => `${p}/${"x".repeat(3000)}`,
    ]).map((rewrite) => ({ ...plan, target: rewrite(fillPathTemplate(plan.op.path)), mutation: "odd_path" })),
  });
  const queryNames = plan.op.params.filter((p) => p.in === "query").map((p) => p.name);
  out.push({
    weight: 2,
    arbitrary: fc
      .oneof(
        ...(queryNames.length > 0 ? [pick(queryNames).map((name) => `${name}=1&${name}=2`)] : []),
        pick([
          "foo=bar",
          "limit=",
          "limit=abc",
          "limit=101",
          "limit=0",
          "limit=-1",
          "limit=1e1",
          "limit=%00",
          "cursor=bm9wZQ",
          "cursor=%FF%FE",
          `client_reference=${"r".repeat(10_000)}`,
          "client_reference=%00",
          "%zz=1",
          "limit[]=1",
          "a[b]=1",
          "&&&",
          "=",
          "limit=1;limit=2",
        ]),
      )
      .map((rawQuery) => ({ ...plan, rawQuery, mutation: "odd_query" })),
  });
  const wrongMethods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "FOO"].filter(
    (m) => m !== plan.method,
  );
  out.push({
    weight: 1,
    arbitrary: pick(wrongMethods).map((method) => ({ ...plan, method, mutation: "wrong_method" })),
  });
  if (plan.method === "GET")
    out.push({ weight: 1, arbitrary: fc.constant({ ...plan, method: "HEAD", mutation: "head" }) });
  if (plan.op.area !== "service") {
    out.push({
      weight: 3,
      arbitrary: badAuthArbitrary(plan.op).map((auth) => ({ ...plan, auth, mutation: `auth_${auth}` })),
    });
  }
  return out;
}

function mutations(plan: Plan): Weighted[] {
  return [...bodyMutations(plan), ...textMutations(plan), ...requestMutations(plan)];
}

/** A path with every parameter filled with a plausible literal, for the whole-path mutations. */
function fillPathTemplate(path: string): string {
  return path.replace(/\{[^}]+\}/g, "x1");
}

function spliceBytes(body: Body, bytes: Uint8Array): Uint8Array | string {
  if (body.kind !== "json") return "";
  // Refs and Huge markers are resolved later; a spliced body resolves them now, with placeholders.
  const text = JSON.stringify(body.value, (_key, value) =>
    value instanceof Ref
      ? `ref-${value.kind}`
      : value instanceof Huge
        ? value.toString()
        : value instanceof Appended
          ? `ref${value.suffix}`
          : value,
  );
  const [before, after] = text.split(SPLICE);
  if (after === undefined) return text;
  return Buffer.concat([Buffer.from(before ?? "", "utf8"), bytes, Buffer.from(after, "utf8")]);
}

/** Partner writes hold most of the logic (carts, purchases, top-ups): they get the most requests. */
function operationWeight(op: Operation): number {
  if (!op.documented) return 1;
  if (op.area === "partner" && op.method === "POST") return 5;
  if (op.area === "partner") return 3;
  return 2;
}

/** Text that has broken servers before, put in every text field, path and query parameter by the sweep. */
const SWEEP_TEXT = ["\u0000", "\uD800", "\u202E🚀"];
const SWEEP_SEGMENTS = ["%zz", "%ED%A0%80", "x".repeat(300)];

/**
 * A deterministic sweep that does not depend on luck: for every operation, a valid request, then
 * that request with each hostile text in each of its text locations, and each hostile path segment
 * in each of its path parameters. Random runs then explore around it.
 */
export function sweepPlans(operations: Operation[], seed: number): Plan[] {
  const plans: Plan[] = [];
  for (const op of operations) {
    const [plan] = fc.sample(validPlanArbitrary(op), { seed, numRuns: 1 });
    if (!plan) continue;
    plans.push(plan);
    for (const location of locations(plan)) {
      for (const text of SWEEP_TEXT) {
        plans.push(setAt(plan, location, (v) => new Appended(v ?? "", text), "sweep"));
      }
    }
    for (const name of Object.keys(plan.pathParams)) {
      for (const raw of SWEEP_SEGMENTS) {
        plans.push({
          ...plan,
          pathParams: { ...plan.pathParams, [name]: new RawSegment(raw) },
          mutation: "sweep",
        });
      }
    }
  }
  return plans;
}

/** Every request of a run: an operation, then a valid plan, then (about half the time) one mutation. */
export function planArbitrary(operations: Operation[]): fc.Arbitrary<Plan> {
  return fc
    .oneof(...operations.map((op) => ({ weight: operationWeight(op), arbitrary: fc.constant(op) })))
    .chain((op) => validPlanArbitrary(op))
    .chain((plan) =>
      fc.oneof(
        { weight: 10, arbitrary: fc.constant(plan) },
        { weight: 10, arbitrary: fc.oneof(...mutations(plan)) },
        { weight: 1, arbitrary: fc.nat().map((replay) => ({ ...plan, replay, mutation: "replay" })) },
      ),
    );
}

// ---------------------------------------------------------------------------------------------
// Fixtures: who calls, and the real objects their valid requests name

export type FuzzPartner = { partner_id: string; api_key: string; key_id: string };

export type Fixtures = {
  admin_token: string;
  main: FuzzPartner;
  other: FuzzPartner;
  poor: FuzzPartner;
  /** Receives the keys the fuzzer may revoke. */
  sacrificial: FuzzPartner;
  revoked_key: string;
  wrong_env_key: string;
  unknown_key: string;
  packages: Array<{ package_id: string; external_package_id: string }>;
  destinations: string[];
  end_user: { email: string; phone: string; first_name: string; last_name: string };
};

/** The partners whose objects valid requests name; invalid credentials are sent with main's objects. */
export type Holder = "main" | "other" | "poor";

/** What one partner owns now: grows as the run buys and creates. */
export type Holdings = {
  fresh_carts: string[];
  used_carts: string[];
  expired_carts: string[];
  orders: string[];
  iccids: string[];
  cursors: string[];
};

/** What exists now: grows as the run buys, creates and revokes. */
export type Pools = {
  holdings: Record<Holder, Holdings>;
  topup_choices: Array<{ package_id: string; external_package_id: string }>;
  idempotency_keys: string[];
  credit_references: string[];
  /** ETags of answers by request-target, for conditional requests (304). */
  etags: Map<string, string>;
  revocable_key_ids: string[];
  revoked_key_ids: string[];
  partner_ids: string[];
  /** Requests already answered, to send again exactly as they were (replays). */
  sent: Sent[];
};

type Sent = { built: Built; auth: AuthKind; route: string | null; status: number; json: any };

const MAX_SENT = 200;

function emptyHoldings(): Holdings {
  return { fresh_carts: [], used_carts: [], expired_carts: [], orders: [], iccids: [], cursors: [] };
}

export function callerOf(auth: AuthKind): Holder {
  if (auth === "other") return "other";
  if (auth === "poor") return "poor";
  return "main";
}

function foreignOf(holder: Holder): Holder {
  return holder === "main" ? "other" : "main";
}

export type FuzzEnvironment = {
  app: App;
  db: Kysely<Database>;
  pool: pg.Pool;
  /** http://127.0.0.1:<port> of the app. */
  url: string;
  port: number;
  doc: any;
  operations: Operation[];
  fixtures: Fixtures;
  pools: Pools;
  /** The route Fastify matched for the last request (null: none, e.g. 404 or a parser error). */
  lastRoute: { method: string; url: string | null } | null;
  close: () => Promise<void>;
};

type Answer = { status: number; headers: Record<string, string>; body: Buffer; text: string };

/** JSON over the raw client, for fixtures: throws unless the status is the expected one. */
async function callJson(
  env: Pick<FuzzEnvironment, "port">,
  method: string,
  path: string,
  options: { auth?: string; body?: unknown; headers?: Record<string, string>; expect?: number[] } = {},
): Promise<any> {
  const headers: Array<[string, string]> = Object.entries(options.headers ?? {});
  if (options.auth) headers.push(["authorization", `Bearer ${options.auth}`]);
  let body: Buffer | null = null;
  if (options.body !== undefined) {
    headers.push(["content-type", "application/json"]);
    body = Buffer.from(JSON.stringify(options.body), "utf8");
  }
  const answer = await rawHttp(env.port, method, path, headers, body);
  const expected = options.expect ?? [200, 201];
  if (!expected.includes(answer.status)) {
    throw new Error(`fixture ${method} ${path}: HTTP ${answer.status} ${answer.text.slice(0, 500)}`);
  }
  return answer.text ? JSON.parse(answer.text) : null;
}

async function newPartner(env: FuzzEnvironment, admin: string, name: string, credit_minor: number) {
  const partner = (await callJson(env, "POST", "/admin/partners", {
    auth: admin,
    body: { name },
  })) as FuzzPartner;
  if (credit_minor > 0) {
    await callJson(env, "POST", `/admin/partners/${partner.partner_id}/wallet/credits`, {
      auth: admin,
      body: { amount_minor: credit_minor, reference: `fuzz-seed-${partner.partner_id}` },
    });
  }
  return partner;
}

const END_USER = { email: "ana@example.com", phone: "+14155550123", first_name: "Ana", last_name: "Lima" };

/** A real purchase through the API and the carrier simulator: a cart, then a submit. */
async function purchase(
  env: FuzzEnvironment,
  api_key: string,
  package_id: string,
  end_user = END_USER,
  expect = [200],
): Promise<any> {
  const cart = await callJson(env, "POST", "/v1/orders/cart", { auth: api_key, body: { package_id } });
  return callJson(env, "POST", "/v1/orders/submit", {
    auth: api_key,
    body: { cart_key: cart.cart_key, ...end_user },
    expect,
  });
}

async function prepareFixtures(env: FuzzEnvironment, admin_token: string): Promise<void> {
  const packages = (
    await sql<{ package_id: string; external_package_id: string }>`
      select package_id, external_package_id from packages where active order by package_id`.execute(env.db)
  ).rows;
  const destinations = (
    await sql<{ destination_code: string }>`
      select distinct destination_code from package_destinations order by destination_code`.execute(env.db)
  ).rows.map((row) => row.destination_code);
  if (packages.length === 0) throw new Error("fuzz: the catalog is empty (seed it first)");
  const ample = 1_000_000_000;
  const main = await newPartner(env, admin_token, "Fuzz Main", ample);
  const other = await newPartner(env, admin_token, "Fuzz Other", ample);
  const poor = await newPartner(env, admin_token, "Fuzz Poor", 0);
  const sacrificial = await newPartner(env, admin_token, "Fuzz Sacrificial", 0);
  const second = await callJson(env, "POST", `/admin/partners/${main.partner_id}/api-keys`, {
    auth: admin_token,
  });
  await callJson(env, "DELETE", `/admin/api-keys/${second.key_id}`, { auth: admin_token, expect: [204] });
  env.fixtures = {
    admin_token,
    main,
    other,
    poor,
    sacrificial,
    revoked_key: second.api_key,
    wrong_env_key: generateApiKey("production").api_key,
    unknown_key: generateApiKey("sandbox").api_key,
    packages,
    destinations,
    end_user: END_USER,
  };
  const pools = env.pools;
  pools.partner_ids.push(main.partner_id, other.partner_id, sacrificial.partner_id);
  pools.revoked_key_ids.push(second.key_id);

  // Real purchases, so valid requests reach the orders, eSIMs and top-ups behind them.
  const country = packages.find((p) => p.package_id === "fr-1gb-7d") ?? packages[0]!;
  for (const [partner, holder] of [
    [main, "main"],
    [other, "other"],
  ] as const) {
    const order = await purchase(env, partner.api_key, country.package_id);
    pools.holdings[holder].orders.push(order.orderID);
    pools.holdings[holder].iccids.push(order.purchases[0].iccid);
  }
  // The poor partner is credited exactly one eSIM and buys it: an eSIM to top up, and nothing left.
  const poorCart = await callJson(env, "POST", "/v1/orders/cart", {
    auth: poor.api_key,
    body: { package_id: country.package_id },
  });
  await callJson(env, "POST", `/admin/partners/${poor.partner_id}/wallet/credits`, {
    auth: admin_token,
    body: { amount_minor: poorCart.total.amount_minor, reference: `fuzz-seed-${poor.partner_id}` },
  });
  const poorOrder = await callJson(env, "POST", "/v1/orders/submit", {
    auth: poor.api_key,
    body: { cart_key: poorCart.cart_key, ...END_USER },
  });
  pools.holdings.poor.orders.push(poorOrder.orderID);
  pools.holdings.poor.iccids.push(poorOrder.purchases[0].iccid);
  pools.holdings.poor.used_carts.push(poorCart.cart_key);
  // A failed order (the carrier refuses this magic email).
  await purchase(
    env,
    main.api_key,
    country.package_id,
    { ...END_USER, email: "decline@carrier.test" },
    [502],
  );
  const page = await callJson(env, "GET", "/v1/profile/orders?limit=1", { auth: main.api_key });
  if (page.next_cursor) pools.holdings.main.cursors.push(page.next_cursor);
  const all = await callJson(env, "GET", "/v1/profile/orders?limit=100", { auth: main.api_key });
  for (const order of all.data) {
    if (!pools.holdings.main.orders.includes(order.orderID)) pools.holdings.main.orders.push(order.orderID);
  }

  pools.topup_choices = await topupChoices(env, main.api_key, pools.holdings.main.iccids[0]!);
  if (env.operations.some((op) => op.path === "/v1/orders/submit-topup")) {
    // A stored Idempotency-Key outcome, so replays and reuse are exercised from the first request.
    const choice = pools.topup_choices[0];
    if (choice) {
      const key = `fuzz-seed-${randomUUID()}`;
      const topup = await callJson(env, "POST", "/v1/orders/submit-topup", {
        auth: main.api_key,
        headers: { "idempotency-key": key },
        body: { iccid: pools.holdings.main.iccids[0], ...choice, ...END_USER },
      });
      pools.holdings.main.orders.push(topup.orderID);
      pools.idempotency_keys.push(key);
    }
  }
  for (const [partner, holder] of [
    [main, "main"],
    [other, "other"],
    [poor, "poor"],
  ] as const) {
    for (let i = 0; i < 2; i++) {
      pools.holdings[holder].fresh_carts.push(await newCart(env, partner.api_key, country.package_id));
    }
  }
  // An expired cart: the only way short of waiting 30 minutes is to age it in the database.
  const expired = await newCart(env, main.api_key, country.package_id);
  await sql`update carts set expires_at = now() - interval '1 minute' where cart_key = ${expired}`.execute(
    env.db,
  );
  pools.holdings.main.expired_carts.push(expired);
}

async function topupChoices(env: FuzzEnvironment, api_key: string, iccid: string) {
  if (!env.operations.some((op) => op.path === "/v1/orders/available-topups/{iccid}")) {
    return env.fixtures.packages.slice(0, 3);
  }
  const offer = await callJson(env, "GET", `/v1/orders/available-topups/${iccid}`, { auth: api_key });
  return (offer.data as any[]).map((row) => ({
    package_id: row.package_id as string,
    external_package_id: row.external_package_id as string,
  }));
}

async function newCart(env: FuzzEnvironment, api_key: string, package_id: string): Promise<string> {
  const cart = await callJson(env, "POST", "/v1/orders/cart", { auth: api_key, body: { package_id } });
  return cart.cart_key;
}

function randomIccid(n: number): string {
  const body = `8901260${String(900_000_000_00 + n).padStart(11, "0")}`;
  return body + String(luhnCheckDigit(body));
}

/** Picks the n-th value of a kind from what exists now; may create a cart or a key first. */
async function resolveRef(env: FuzzEnvironment, ref: Ref, used: ResolvedRefs): Promise<unknown> {
  const { pools, fixtures } = env;
  const own = pools.holdings[used.caller];
  const foreign = pools.holdings[foreignOf(used.caller)];
  const n = ref.n;
  const at = <T>(items: readonly T[], fallback: T): T => (items.length ? items[n % items.length]! : fallback);
  const bucket = n % 20;
  switch (ref.kind) {
    case "package_id":
      return bucket < 17 ? at(fixtures.packages, undefined)?.package_id : `nope-${n % 1000}`;
    case "external_package_id":
      return bucket < 17 ? at(fixtures.packages, undefined)?.external_package_id : `ext-nope-${n % 1000}`;
    case "topup_choice": {
      const choice =
        bucket < 18
          ? at(pools.topup_choices, fixtures.packages[0]!)
          : at(fixtures.packages, fixtures.packages[0]!);
      return ref.field === "external_package_id" ? choice.external_package_id : choice.package_id;
    }
    case "cart_key": {
      if (bucket < 11) {
        if (own.fresh_carts.length === 0) {
          const api_key = fixtures[used.caller].api_key;
          own.fresh_carts.push(await newCart(env, api_key, fixtures.packages[0]!.package_id));
        }
        const cart = own.fresh_carts[0]!;
        used.cart_key = cart;
        return cart;
      }
      if (bucket < 14) return at(own.used_carts, at(pools.holdings.main.expired_carts, "cart_none"));
      if (bucket < 15) return at(pools.holdings.main.expired_carts, "cart_none");
      if (bucket < 18) return at([...foreign.fresh_carts, ...foreign.used_carts], "cart_none");
      return `cart_${Buffer.from(String(n)).toString("base64url").padEnd(22, "A")}`;
    }
    case "order_id":
      if (bucket < 14) return at(own.orders, "ord_none");
      if (bucket < 17) return at(foreign.orders, "ord_none");
      return `ord_${Buffer.from(String(n)).toString("base64url").padEnd(22, "A")}`;
    case "iccid":
      if (bucket < 14) return at(own.iccids, randomIccid(n));
      if (bucket < 17) return at(foreign.iccids, randomIccid(n));
      return randomIccid(n);
    case "partner_id":
      if (bucket < 17) return at(pools.partner_ids, fixtures.main.partner_id);
      return `ptr_${"A".repeat(16)}${n % 1000}`;
    case "key_id": {
      if (bucket < 12) {
        if (pools.revocable_key_ids.length === 0) {
          const issued = await callJson(
            env,
            "POST",
            `/admin/partners/${fixtures.sacrificial.partner_id}/api-keys`,
            {
              auth: fixtures.admin_token,
            },
          );
          pools.revocable_key_ids.push(issued.key_id);
        }
        const key_id = pools.revocable_key_ids[0]!;
        used.key_id = key_id;
        return key_id;
      }
      if (bucket < 16) return at(pools.revoked_key_ids, "key_none");
      return `key_${"B".repeat(16)}${n % 1000}`;
    }
    case "destination_code": {
      // A few destinations often (conditional requests need a repeat), any of them sometimes.
      if (bucket < 6) return at(["FR", "DE", "US"], "FR");
      const code = at(fixtures.destinations, "FR");
      if (bucket < 12) return code;
      if (bucket < 17) return code.toLowerCase();
      return at(["ZZ", "XX", "QQ"], "ZZ");
    }
    case "email":
      if (n % 25 === 0) return "decline@carrier.test";
      if (n % 25 === 1) return "unavailable@carrier.test";
      return at(
        ["ana@example.com", "ops+tag@example.org", "a@b.co", "x.y@sub.example.travel"],
        "ana@example.com",
      );
    case "phone":
      return at(
        ["+14155550123", "+33612345678", "+447911123456", "+5511912345678", "+10000000000"],
        END_USER.phone,
      );
    case "person_name":
      return at(["Ana", "Lima", "Zoë", "O'Brien", "李", "محمد", "Jean-Luc", " Padded "], "Ana");
    case "client_reference":
      return at(["booking-1", "booking-2", "ユーザー42", "x".repeat(128)], "booking-1");
    case "cursor":
      return bucket < 14 ? at(own.cursors, "bm9wZQ") : "bm9wZQ";
    case "idempotency_key":
      if (bucket < 10 || pools.idempotency_keys.length === 0) {
        const key = `fuzz-${n}-${randomBytes(4).toString("hex")}`;
        used.idempotency_key = key;
        return key;
      }
      return at(pools.idempotency_keys, "fuzz-none");
    case "etag": {
      const current = used.target === undefined ? undefined : pools.etags.get(used.target);
      const any = at([...pools.etags.values()], '"none"');
      if (bucket < 12) return current ?? any;
      if (bucket < 15) return `W/${current ?? any}`;
      if (bucket < 17) return `"stale", ${current ?? any}`;
      return any;
    }
    case "credit_reference":
      if (bucket < 12 || pools.credit_references.length === 0) {
        const reference = `fuzz-credit-${randomBytes(6).toString("hex")}`;
        used.credit_reference = reference;
        return reference;
      }
      return at(pools.credit_references, "fuzz-none");
  }
}

type ResolvedRefs = {
  /** Whose objects the request names: the caller's own, mostly. */
  caller: Holder;
  /** The request-target, once built (headers are resolved after it). */
  target?: string;
  cart_key?: string;
  key_id?: string;
  idempotency_key?: string;
  credit_reference?: string;
};

async function resolveValue(env: FuzzEnvironment, value: unknown, used: ResolvedRefs): Promise<unknown> {
  if (value instanceof Ref) return resolveRef(env, value, used);
  if (value instanceof Huge) return value.toString();
  if (value instanceof Appended) {
    const base = await resolveValue(env, value.base, used);
    return `${typeof base === "string" ? base : JSON.stringify(base)}${value.suffix}`;
  }
  if (value instanceof RawSegment) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await resolveValue(env, item, used));
    return out;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a generated "__proto__" key stays a key, as it would in a client's JSON.
      Object.defineProperty(out, key, {
        value: await resolveValue(env, item, used),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Transport: raw HTTP/1.1 over TCP, one connection per request

/** Every code unit fits in one byte (latin1). */
function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

function headerBytes(name: string, value: unknown): Buffer {
  // latin1: every code unit below 256 goes out as that byte; higher ones as UTF-8, like a careless client.
  const text = String(value);
  const line = Buffer.from(text, isLatin1(text) ? "latin1" : "utf8");
  return Buffer.concat([Buffer.from(`${name}: `, "latin1"), line, Buffer.from("\r\n", "latin1")]);
}

export async function rawHttp(
  port: number,
  method: string,
  target: string,
  headers: Array<[string, unknown]>,
  body: Buffer | null,
): Promise<Answer> {
  const lines: Buffer[] = [
    Buffer.from(`${method} `, "latin1"),
    Buffer.from(target, isLatin1(target) ? "latin1" : "utf8"),
    Buffer.from(" HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n", "latin1"),
  ];
  for (const [name, value] of headers) lines.push(headerBytes(name, value));
  const hasLength = headers.some(([name]) => name.toLowerCase() === "content-length");
  const chunked = headers.some(([name]) => name.toLowerCase() === "transfer-encoding");
  if (body !== null && !hasLength && !chunked)
    lines.push(Buffer.from(`content-length: ${body.length}\r\n`, "latin1"));
  lines.push(Buffer.from("\r\n", "latin1"));
  if (body !== null) {
    lines.push(
      chunked
        ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")])
        : body,
    );
  }
  const request = Buffer.concat(lines);
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`));
    }, REQUEST_TIMEOUT_MS);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // The server may answer and close before reading all we sent (413, parser errors): keep the answer.
      if (chunks.length > 0 && (error.code === "ECONNRESET" || error.code === "EPIPE")) return;
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    // No half-close: Node's server drops a connection whose client ended before the answer.
    // `connection: close` makes the server close it once it has answered.
    socket.write(request);
  });
  return parseResponse(raw, method);
}

function parseResponse(raw: Buffer, method: string): Answer {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0)
    throw new Error(`malformed HTTP response (${raw.length} bytes): ${raw.toString("latin1").slice(0, 200)}`);
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let body = raw.subarray(end + 4);
  if (method === "HEAD" || status === 204 || status === 304) body = Buffer.alloc(0);
  else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) body = dechunk(body);
  else if (headers["content-length"] !== undefined)
    body = body.subarray(0, Number(headers["content-length"]));
  return { status, headers, body, text: body.toString("utf8") };
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!size) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------------------------
// Building the bytes of a plan

type Built = {
  method: string;
  target: string;
  headers: Array<[string, unknown]>;
  body: Buffer | null;
  used: ResolvedRefs;
};

function authHeaders(env: FuzzEnvironment, auth: AuthKind): Array<[string, unknown]> {
  const f = env.fixtures;
  const bearer = (key: string): Array<[string, unknown]> => [["authorization", `Bearer ${key}`]];
  switch (auth) {
    case "main":
      return bearer(f.main.api_key);
    case "main_x_api_key":
      return [["x-api-key", f.main.api_key]];
    case "other":
      return bearer(f.other.api_key);
    case "poor":
      return bearer(f.poor.api_key);
    case "none":
    case "anonymous":
      return [];
    case "malformed":
      return [["authorization", "Bearer sand_short"]];
    case "revoked":
      return bearer(f.revoked_key);
    case "wrong_env":
      return bearer(f.wrong_env_key);
    case "unknown":
      return bearer(f.unknown_key);
    case "duplicate":
      return [
        ["authorization", "Bearer sand_garbage"],
        ["authorization", `Bearer ${f.main.api_key}`],
      ];
    case "admin":
      return bearer(f.admin_token);
    case "admin_wrong":
      return bearer("wrong-admin-token-0123456789");
    case "admin_partner_key":
      return bearer(f.main.api_key);
  }
}

/** Percent-encodes UTF-8 bytes; unlike encodeURIComponent it accepts lone surrogates (as U+FFFD). */
function percentEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function encodeQueryValue(value: unknown): string {
  return percentEncode(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
}

async function build(env: FuzzEnvironment, plan: Plan, sequence: number): Promise<Built> {
  const used: ResolvedRefs = { caller: callerOf(plan.auth) };
  let target = plan.target;
  if (target === null) {
    target = plan.op.path;
    for (const [name, value] of Object.entries(plan.pathParams)) {
      const resolved = await resolveValue(env, value, used);
      const segment =
        resolved instanceof RawSegment
          ? resolved.raw
          : percentEncode(typeof resolved === "string" ? resolved : String(resolved));
      target = target.replace(`{${name}}`, segment);
    }
  }
  const query: string[] = [];
  for (const [name, value] of plan.query) {
    query.push(`${percentEncode(name)}=${encodeQueryValue(await resolveValue(env, value, used))}`);
  }
  if (plan.rawQuery) query.push(plan.rawQuery);
  if (query.length > 0) target += `?${query.join("&")}`;
  used.target = target;
  // Headers the plan names replace the defaults of the same name; a name it repeats is sent twice.
  const named = new Set(plan.headers.map(([name]) => name));
  const headers: Array<[string, unknown]> = [
    ["x-request-id", `fuzz-${sequence}`],
    ...authHeaders(env, plan.auth),
  ].filter(([name]) => !named.has(name as string)) as Array<[string, unknown]>;
  for (const [name, value] of plan.headers) {
    const resolved = await resolveValue(env, value, used);
    headers.push([name, typeof resolved === "string" ? resolved : JSON.stringify(resolved)]);
  }
  if (plan.contentType !== null) headers.push(["content-type", plan.contentType]);
  let body: Buffer | null = null;
  if (plan.body.kind === "json") {
    const value = await resolveValue(env, plan.body.value, used);
    body = Buffer.from(JSON.stringify(value) ?? "null", "utf8");
  } else if (plan.body.kind === "raw") {
    const bytes = plan.body.bytes;
    body = bytes instanceof Huge ? Buffer.from(bytes.toString()) : Buffer.from(bytes as string | Uint8Array);
  } else if (plan.contentType !== null) {
    body = Buffer.alloc(0);
  }
  return { method: plan.method, target, headers, body, used };
}

// ---------------------------------------------------------------------------------------------
// Checking a response

export type Violation = { kind: string; message: string };

type AjvLike = { compile: (schema: object) => ((data: unknown) => boolean) & { errors?: unknown } };

function createAjv(): AjvLike {
  const Ajv = (ajv2020 as any).default ?? ajv2020;
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  const addFormats = (ajvFormatsModule as any).default ?? ajvFormatsModule;
  addFormats(ajv);
  return ajv;
}

export class ResponseChecker {
  readonly #ajv = createAjv();
  readonly #validators = new Map<string, ((data: unknown) => boolean) & { errors?: unknown }>();
  readonly #byRoute = new Map<string, Operation>();
  readonly #problem: JsonSchema;

  constructor(operations: Operation[]) {
    for (const op of operations) this.#byRoute.set(`${op.method} ${op.path}`, op);
    const any400 = operations.find((op) => op.responses["400"])?.responses["400"];
    const schema = any400?.content?.["application/problem+json"]?.schema;
    if (!schema) throw new Error("fuzz: the OpenAPI document has no problem+json schema to check against");
    const { "x-error-codes": _codes, ...problem } = schema;
    this.#problem = problem;
  }

  /** The documented operation Fastify matched, by method (HEAD answers as GET) and route. */
  operationFor(route: { method: string; url: string | null } | null): Operation | null {
    if (!route?.url) return null;
    const method = route.method === "HEAD" ? "GET" : route.method;
    return this.#byRoute.get(`${method} ${openapiPath(route.url)}`) ?? null;
  }

  #validate(key: string, schema: JsonSchema, data: unknown): string | null {
    let validate = this.#validators.get(key);
    if (!validate) {
      validate = this.#ajv.compile(schema);
      this.#validators.set(key, validate);
    }
    if (validate(data)) return null;
    return JSON.stringify(validate.errors).slice(0, REPORT_CHARS);
  }

  check(answer: Answer, routed: Operation | null, method: string): Violation[] {
    const violations: Violation[] = [];
    const fail = (kind: string, message: string) => violations.push({ kind, message });
    const contentType = (answer.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (!answer.headers["x-request-id"]) fail("no_request_id", "the response has no X-Request-Id");
    if (answer.status >= 500 && !(answer.status === 502 || answer.status === 503)) {
      fail("server_error", `HTTP ${answer.status}`);
    }
    let json: any;
    if (answer.status >= 400 && method !== "HEAD") {
      if (contentType !== "application/problem+json") {
        fail("not_problem_json", `HTTP ${answer.status} as ${answer.headers["content-type"] ?? "(none)"}`);
      }
      try {
        json = JSON.parse(answer.text);
      } catch {
        fail("error_not_json", `HTTP ${answer.status} body is not JSON`);
        return violations;
      }
      const code = json?.code;
      const spec = (ERROR_CODES as Record<string, { status: number }>)[code];
      if (!spec) fail("unknown_code", `code ${JSON.stringify(code)} is not in the closed set`);
      else if (spec.status !== answer.status)
        fail("code_status", `code ${code} is ${spec.status}, sent as ${answer.status}`);
      if (json?.status !== answer.status)
        fail("problem_status", `body status ${json?.status} for HTTP ${answer.status}`);
      // A replayed Idempotency-Key outcome is the first answer byte for byte, its request_id included.
      const replayed = answer.headers["idempotent-replayed"] === "true";
      if (!replayed && json?.request_id !== answer.headers["x-request-id"]) {
        fail("problem_request_id", "request_id differs from the X-Request-Id header");
      }
      if (!routed) {
        const problem = this.#validate("problem", this.#problem, json);
        if (problem) fail("schema", `problem body: ${problem}`);
      }
    }
    if (!routed) return violations;
    if (!routed.documented) return violations;
    const response = routed.responses[String(answer.status)] ?? routed.responses.default;
    if (!response) {
      fail(
        "undocumented_status",
        `HTTP ${answer.status}${json?.code ? ` (${json.code})` : ""} is not documented`,
      );
      return violations;
    }
    const content: Record<string, any> | undefined = response.content;
    if (!content || method === "HEAD") {
      if (!content && answer.body.length > 0)
        fail("unexpected_body", `HTTP ${answer.status} is documented without a body`);
      return violations;
    }
    const media = content[contentType];
    if (!media) {
      fail(
        "undocumented_content_type",
        `HTTP ${answer.status} as ${contentType || "(none)"}; documented: ${Object.keys(content).join(", ")}`,
      );
      return violations;
    }
    if (json === undefined) {
      try {
        json = JSON.parse(answer.text);
      } catch {
        fail("body_not_json", `HTTP ${answer.status} body is not JSON`);
        return violations;
      }
    }
    const codes: string[] | undefined = media.schema?.["x-error-codes"];
    if (codes && !codes.includes(json?.code)) {
      fail(
        "undocumented_code",
        `${json?.code} is not documented for HTTP ${answer.status} (documented: ${codes.join(", ")})`,
      );
    }
    const invalid = this.#validate(`${routed.id} ${answer.status} ${contentType}`, media.schema ?? {}, json);
    if (invalid) fail("schema", `HTTP ${answer.status} body does not match its schema: ${invalid}`);
    return violations;
  }
}

// ---------------------------------------------------------------------------------------------
// The business tables, before and after a rejected request

export const BUSINESS_TABLES = [
  "orders",
  "carts",
  "ledger_transfers",
  "ledger_accounts",
  "idempotency_keys",
  "api_keys",
  "partners",
] as const;

export type Snapshot = Record<string, string>;

/** Per table: row count and an order-independent sum of row hashes (any changed column changes it). */
export async function snapshotTables(db: Kysely<Database>): Promise<Snapshot> {
  const parts = BUSINESS_TABLES.map(
    (table) =>
      `select '${table}' as name, count(*)::text || ':' || coalesce(sum(hashtext(t::text)::bigint), 0)::text as digest from ${table} t`,
  );
  const result = await sql<{ name: string; digest: string }>`${sql.raw(parts.join(" union all "))}`.execute(
    db,
  );
  return Object.fromEntries(result.rows.map((row) => [row.name, row.digest]));
}

export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return BUSINESS_TABLES.filter((table) => before[table] !== after[table]);
}

// ---------------------------------------------------------------------------------------------
// The run

export type Outcome = {
  sequence: number;
  op: string;
  mutation: string;
  auth: AuthKind;
  request: { method: string; target: string; headers: string; body: string };
  status: number;
  code: string | null;
  route: string | null;
  violations: Violation[];
  response: string;
};

export type FuzzReport = {
  seed: number;
  /** Random requests; the sweep's come on top. */
  runs: number;
  sweep: number;
  duration_ms: number;
  /** op id -> status -> count */
  byRoute: Record<string, Record<string, number>>;
  byMutation: Record<string, number>;
  /** Distinct failures: kind, route, status and code, with a few examples each. */
  failures: Array<{ key: string; count: number; examples: Outcome[] }>;
  /** Operations that answered 2xx at least once: valid requests reached the code behind them. */
  succeeded: string[];
};

function truncate(text: string, chars = REPORT_CHARS): string {
  return text.length > chars ? `${text.slice(0, chars)}… (${text.length} chars)` : text;
}

/** Extra invariants about credentials, beyond the document: a bad key never gets past 401. */
function authViolations(auth: AuthKind, routed: Operation | null, answer: Answer, json: any): Violation[] {
  const out: Violation[] = [];
  if (!routed) return out;
  if (routed.area === "partner") {
    if (INVALID_PARTNER_AUTH.includes(auth)) {
      const expected = auth === "wrong_env" ? "wrong_environment" : "unauthorized";
      if (answer.status !== 401 || json?.code !== expected) {
        out.push({
          kind: "auth",
          message: `${auth} credentials answered ${answer.status} ${json?.code ?? ""}, not 401 ${expected}`,
        });
      }
    }
  }
  if (routed.area === "admin" && auth !== "admin" && auth !== "duplicate") {
    if (answer.status !== 401 && !(answer.status === 404 && json?.code === "not_found")) {
      out.push({ kind: "auth", message: `${auth} on the operator API answered ${answer.status}` });
    }
  }
  return out;
}

/** Learns from answers: new carts, orders, ICCIDs, keys and references join the pools. */
function learn(env: FuzzEnvironment, sent: Sent, routed: Operation | null, answer: Answer, json: any) {
  const { pools } = env;
  const { built, auth } = sent;
  const path = routed?.path;
  const holdings = VALID_PARTNER_AUTH.includes(auth) ? pools.holdings[callerOf(auth)] : null;
  if (built.used.cart_key && path === "/v1/orders/submit" && [200, 409, 502, 503].includes(answer.status)) {
    for (const holder of Object.values(pools.holdings)) {
      holder.fresh_carts = holder.fresh_carts.filter((c) => c !== built.used.cart_key);
    }
    const owner = pools.holdings[built.used.caller];
    if (!owner.used_carts.includes(built.used.cart_key)) owner.used_carts.push(built.used.cart_key);
  }
  if (built.used.key_id && path === "/admin/api-keys/{key_id}" && answer.status === 204) {
    pools.revocable_key_ids = pools.revocable_key_ids.filter((k) => k !== built.used.key_id);
    pools.revoked_key_ids.push(built.used.key_id);
  }
  if (built.used.idempotency_key && answer.status < 500 && answer.status !== 400) {
    if (pools.idempotency_keys.length < 200) pools.idempotency_keys.push(built.used.idempotency_key);
  }
  if (built.used.credit_reference && answer.status === 201 && pools.credit_references.length < 200) {
    pools.credit_references.push(built.used.credit_reference);
  }
  // Replayable: answered POSTs of a normal size (a 200 KB body is kept only as its own mutation).
  if (routed?.method === "POST" && answer.status !== 0 && (built.body?.length ?? 0) <= 16_384) {
    pools.sent.push(sent);
    if (pools.sent.length > MAX_SENT) pools.sent.shift();
  }
  const etag = answer.headers.etag;
  if (etag && answer.status === 200 && pools.etags.size < 500) pools.etags.set(built.target, etag);
  if (answer.status >= 300 || !json) return;
  if (path === "/v1/orders/cart" && answer.status === 201 && holdings && holdings.fresh_carts.length < 50) {
    holdings.fresh_carts.push(json.cart_key);
  }
  const bought = path === "/v1/orders/submit" || path === "/v1/orders/submit-topup";
  if (bought && answer.status === 200 && json.orderID && holdings) {
    if (!holdings.orders.includes(json.orderID) && holdings.orders.length < 500)
      holdings.orders.push(json.orderID);
    const iccid = json.purchases?.[0]?.iccid;
    if (iccid && !holdings.iccids.includes(iccid) && holdings.iccids.length < 100)
      holdings.iccids.push(iccid);
  }
  if (path === "/v1/profile/orders" && holdings && json.next_cursor && holdings.cursors.length < 50) {
    holdings.cursors.push(json.next_cursor);
  }
  if (path === "/admin/partners" && answer.status === 201) {
    if (pools.partner_ids.length < 100) pools.partner_ids.push(json.partner_id);
    pools.revocable_key_ids.push(json.key_id);
  }
  if (path === "/admin/partners/{partner_id}/api-keys" && answer.status === 201) {
    pools.revocable_key_ids.push(json.key_id);
  }
}

/**
 * A replay is the same bytes sent again. Where the API promises idempotency (submit by cart_key,
 * submit-topup by Idempotency-Key), a final outcome must come back the same: the status, and for
 * a 200 the same order.
 */
function replayViolations(original: Sent, answer: Answer, json: any): Violation[] {
  const keyed = original.built.headers.some(([name]) => name.toLowerCase() === "idempotency-key");
  const promised =
    original.route === "POST /v1/orders/submit" ||
    (original.route === "POST /v1/orders/submit-topup" && keyed);
  if (!promised || ![200, 402, 502].includes(original.status)) return [];
  if (original.route === "POST /v1/orders/submit" && original.status === 402) return [];
  if (answer.status !== original.status) {
    return [{ kind: "replay", message: `first answered ${original.status}, the replay ${answer.status}` }];
  }
  if (original.status === 200 && json?.orderID !== original.json?.orderID) {
    return [
      { kind: "replay", message: `first order ${original.json?.orderID}, the replay's ${json?.orderID}` },
    ];
  }
  return [];
}

/** Rejected requests that legitimately write: a 402 top-up under an Idempotency-Key stores its outcome. */
function allowedChanges(routed: Operation | null, answer: Answer, built: Built): string[] {
  const keyed = built.headers.some(([name]) => name.toLowerCase() === "idempotency-key");
  if (routed?.path === "/v1/orders/submit-topup" && answer.status === 402 && keyed)
    return ["idempotency_keys"];
  return [];
}

/** Headers the contract promises: Retry-After on answers that say "later", RateLimit-* on the partner API. */
function headerViolations(routed: Operation | null, answer: Answer, json: any): Violation[] {
  const out: Violation[] = [];
  const later = ["rate_limited", "request_in_progress", "carrier_unavailable"].includes(json?.code);
  if (later && !/^\d+$/.test(answer.headers["retry-after"] ?? "")) {
    out.push({ kind: "headers", message: `${json.code} without a Retry-After of whole seconds` });
  }
  // Every authenticated partner call takes a token from the bucket and says so.
  if (
    routed?.area === "partner" &&
    answer.status !== 401 &&
    answer.headers["ratelimit-limit"] === undefined
  ) {
    out.push({
      kind: "headers",
      message: `HTTP ${answer.status} on the partner API without RateLimit-Limit`,
    });
  }
  return out;
}

/** The same request again, under a request id of its own. */
function replayOf(built: Built, sequence: number): Built {
  const headers = built.headers.map(([name, value]): [string, unknown] =>
    name === "x-request-id" && String(value).startsWith("fuzz-") ? [name, `fuzz-${sequence}`] : [name, value],
  );
  return { ...built, headers };
}

export async function executePlan(
  env: FuzzEnvironment,
  checker: ResponseChecker,
  plan: Plan,
  sequence: number,
): Promise<Outcome> {
  const original =
    plan.replay !== null && env.pools.sent.length > 0
      ? env.pools.sent[plan.replay % env.pools.sent.length]!
      : null;
  const built = original ? replayOf(original.built, sequence) : await build(env, plan, sequence);
  const auth = original ? original.auth : plan.auth;
  const before = await snapshotTables(env.db);
  env.lastRoute = null;
  const violations: Violation[] = [];
  let answer: Answer;
  try {
    answer = await rawHttp(env.port, built.method, built.target, built.headers, built.body);
  } catch (error) {
    answer = { status: 0, headers: {}, body: Buffer.alloc(0), text: "" };
    violations.push({ kind: "transport", message: (error as Error).message });
  }
  const route = env.lastRoute as FuzzEnvironment["lastRoute"];
  const routed = route?.url ? (checker.operationFor(route) ?? hiddenOperation(env, route)) : null;
  let json: any = null;
  try {
    json = answer.text ? JSON.parse(answer.text) : null;
  } catch {
    json = null;
  }
  if (answer.status !== 0) {
    violations.push(...checker.check(answer, routed, built.method));
    // No route matched (unknown path or method, or a request the HTTP parser refused): 404 not_found
    // or 400 invalid_request, nothing else.
    const unroutedOk =
      (answer.status === 404 && json?.code === "not_found") ||
      (answer.status === 400 && json?.code === "invalid_request");
    if (!routed && !route?.url && !unroutedOk) {
      violations.push({
        kind: "unrouted",
        message: `no route matched, answered ${answer.status} ${json?.code ?? ""}`,
      });
    }
    violations.push(...authViolations(auth, routed, answer, json));
    violations.push(...headerViolations(routed, answer, json));
    if (original) violations.push(...replayViolations(original, answer, json));
  }
  if (answer.status >= 400 && answer.status < 500) {
    const after = await snapshotTables(env.db);
    const allowed = allowedChanges(routed, answer, built);
    const changed = changedTables(before, after).filter((table) => !allowed.includes(table));
    if (changed.length > 0) {
      violations.push({
        kind: "db_changed",
        message: `HTTP ${answer.status} ${json?.code ?? ""} changed ${changed.join(", ")}`,
      });
    }
  }
  const route_id = routed?.id ?? null;
  learn(env, { built, auth, route: route_id, status: answer.status, json }, routed, answer, json);
  const bodyText = built.body ? built.body.toString("utf8") : "";
  return {
    sequence,
    op: plan.op.id,
    mutation: original ? "replay" : plan.mutation,
    auth,
    request: {
      method: built.method,
      target: truncate(built.target, 300),
      headers: truncate(built.headers.map(([n, v]) => `${n}: ${String(v)}`).join(" | "), 600),
      body: truncate(bodyText),
    },
    status: answer.status,
    code: typeof json?.code === "string" ? json.code : null,
    route: routed?.id ?? (route?.url ? `${route.method} ${route.url}` : null),
    violations,
    response: truncate(answer.text),
  };
}

function hiddenOperation(
  env: FuzzEnvironment,
  route: { method: string; url: string | null },
): Operation | null {
  return (
    env.operations.find((op) => !op.documented && op.method === route.method && op.path === route.url) ?? null
  );
}

export async function runFuzz(
  env: FuzzEnvironment,
  options: { seed: number; runs: number; onProgress?: (done: number, outcome: Outcome) => void },
): Promise<FuzzReport> {
  const started = Date.now();
  const checker = new ResponseChecker(env.operations);
  // The sweep first (a few dozen requests, the same every run), then the random requests.
  const sweep = sweepPlans(env.operations, options.seed);
  const plans = [
    ...sweep,
    ...fc.sample(planArbitrary(env.operations), { seed: options.seed, numRuns: options.runs }),
  ];
  const report: FuzzReport = {
    seed: options.seed,
    runs: options.runs,
    sweep: sweep.length,
    duration_ms: 0,
    byRoute: {},
    byMutation: {},
    failures: [],
    succeeded: [],
  };
  const failures = new Map<string, { key: string; count: number; examples: Outcome[] }>();
  const succeeded = new Set<string>();
  for (const [index, plan] of plans.entries()) {
    const outcome = await executePlan(env, checker, plan, index);
    const routeKey = outcome.route ?? `(unrouted: ${plan.op.id})`;
    const statuses = report.byRoute[routeKey] ?? {};
    report.byRoute[routeKey] = statuses;
    statuses[String(outcome.status)] = (statuses[String(outcome.status)] ?? 0) + 1;
    const mutation = outcome.mutation.startsWith("auth_") ? "bad_auth" : outcome.mutation;
    report.byMutation[mutation] = (report.byMutation[mutation] ?? 0) + 1;
    if (outcome.status >= 200 && outcome.status < 300 && outcome.route) succeeded.add(outcome.route);
    if (outcome.violations.length > 0) {
      // One entry per symptom: what broke, where, and the answer; one cause often breaks several checks.
      const kinds = [...new Set(outcome.violations.map((v) => v.kind))].sort().join("+");
      const where = outcome.route ?? `unrouted (${plan.op.id})`;
      const key = `${kinds} | ${where} | ${outcome.status} ${outcome.code ?? ""}`.trim();
      const entry = failures.get(key) ?? { key, count: 0, examples: [] };
      entry.count++;
      if (entry.examples.length < EXAMPLES_PER_FAILURE) entry.examples.push(outcome);
      failures.set(key, entry);
    }
    options.onProgress?.(index + 1, outcome);
  }
  report.failures = [...failures.values()].sort((a, b) => b.count - a.count);
  report.succeeded = [...succeeded].sort();
  report.duration_ms = Date.now() - started;
  return report;
}

export function formatReport(report: FuzzReport): string {
  const lines: string[] = [];
  lines.push(
    `fuzz: seed ${report.seed}, ${report.runs} random requests and ${report.sweep} of the sweep ` +
      `in ${(report.duration_ms / 1000).toFixed(1)} s`,
  );
  lines.push("", "By route and status:");
  const routes = Object.keys(report.byRoute).sort();
  const width = Math.max(...routes.map((r) => r.length), 10);
  for (const route of routes) {
    const statuses = Object.entries(report.byRoute[route]!)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, count]) => `${status}×${count}`)
      .join("  ");
    lines.push(`  ${route.padEnd(width)}  ${statuses}`);
  }
  lines.push("", "By mutation:");
  for (const [mutation, count] of Object.entries(report.byMutation).sort(([, a], [, b]) => b - a)) {
    lines.push(`  ${mutation.padEnd(20)} ${count}`);
  }
  lines.push(
    "",
    report.failures.length === 0 ? "No failures." : `${report.failures.length} distinct failures:`,
  );
  for (const failure of report.failures) {
    lines.push(`  [${failure.count}×] ${failure.key}`);
    for (const example of failure.examples) {
      lines.push(`      #${example.sequence} ${example.mutation}/${example.auth}:`);
      for (const violation of example.violations)
        lines.push(`        ${violation.kind}: ${violation.message}`);
      lines.push(`        ${example.request.method} ${example.request.target}`);
      lines.push(`        headers: ${example.request.headers}`);
      if (example.request.body) lines.push(`        body: ${example.request.body}`);
      lines.push(`        -> ${example.status} ${example.response}`);
    }
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// The environment: the real app on a real port, the carrier simulator, a migrated database

export async function startFuzzEnvironment(
  database: { url: string; pool: pg.Pool },
  options: { config?: Partial<Config>; build?: BuildOptions } = {},
): Promise<FuzzEnvironment> {
  const simulatorKey = `sim_${randomBytes(16).toString("hex")}`;
  const simulator = await startSimulator({
    pool: database.pool,
    port: 0,
    host: "127.0.0.1",
    apiKey: simulatorKey,
    latency_ms: 0,
    slow_ms: 3_000,
  });
  const config: Config = {
    ...loadConfig({}),
    log_level: "silent",
    admin_token: FUZZ_ADMIN_TOKEN,
    database_url: database.url,
    rate_limit_per_second: 1_000_000,
    rate_limit_burst: 1_000_000,
    auth_failures_per_minute: 1_000_000,
    carrier_timeout_ms: 2_000,
    ...options.config,
  };
  const db = createKysely<Database>(database.pool);
  await ensureOperatorAccounts(db, config.currency);
  const carrier = new HttpCarrier({
    base_url: simulator.url,
    api_key: simulatorKey,
    timeout_ms: config.carrier_timeout_ms,
  });
  const ctx: AppContext = { config, pool: database.pool, db, carrier };
  const { app } = await buildApp(ctx, options.build);
  const env = {
    app,
    db,
    pool: database.pool,
    url: "",
    port: 0,
    doc: null,
    operations: [],
    fixtures: null as unknown as Fixtures,
    pools: {
      holdings: { main: emptyHoldings(), other: emptyHoldings(), poor: emptyHoldings() },
      topup_choices: [],
      idempotency_keys: [],
      credit_references: [],
      etags: new Map(),
      revocable_key_ids: [],
      revoked_key_ids: [],
      partner_ids: [],
      sent: [],
    },
    lastRoute: null,
    close: async () => {
      await app.close();
      await simulator.close();
    },
  } as FuzzEnvironment;
  // Which route Fastify matched: the truth the checker needs for odd paths (`..`, %2F, HEAD).
  app.addHook("onSend", async (request) => {
    env.lastRoute = { method: request.method, url: request.routeOptions.url ?? null };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  env.port = typeof address === "object" && address ? address.port : 0;
  env.url = `http://127.0.0.1:${env.port}`;
  env.doc = await callJson(env, "GET", "/openapi.json");
  env.operations = operationsOf(env.doc);
  await prepareFixtures(env, config.admin_token!);
  return env;
}

// What every answer must be: documented status and problem code, a body matching the route's
// response schema; and what a refused request must not do: change the business tables.
import * as ajv2020 from "ajv/dist/2020.js";
import ajvFormatsModule from "ajv-formats";
import { type Kysely, sql } from "kysely";
import type { Database } from "../../../src/db/schema.ts";
import { ERROR_CODES } from "../../../src/shared/errors.ts";
import { REPORT_CHARS } from "./limits.ts";
import { type JsonSchema, type Operation, openapiPath } from "./openapi.ts";
import type { Answer } from "./state.ts";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export type Violation = { kind: string; message: string };

export type AjvLike = { compile: (schema: object) => ((data: unknown) => boolean) & { errors?: unknown } };

export function createAjv(): AjvLike {
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
    // A documented binary body (the eSIM QR image) is checked by its signature, not parsed as JSON.
    if (media.schema?.format === "binary") {
      if (contentType === "image/png" && !Buffer.from(answer.body).subarray(0, 8).equals(PNG_SIGNATURE)) {
        fail("body_not_png", `HTTP ${answer.status} image/png body is not a PNG`);
      }
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

// Plans: what one request will be (operation, credentials, parameters, body), valid first.
import fc from "fast-check";
import { fieldArbitrary, schemaArbitrary } from "./arbitraries.ts";
import type { Operation, Parameter } from "./openapi.ts";
import type { Huge } from "./refs.ts";

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

export function authArbitrary(op: Operation): fc.Arbitrary<AuthKind> {
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

export function badAuthArbitrary(op: Operation): fc.Arbitrary<AuthKind> {
  if (op.area === "admin")
    return fc.constantFrom<AuthKind>("none", "admin_wrong", "admin_partner_key", "duplicate");
  return fc.constantFrom<AuthKind>(...INVALID_PARTNER_AUTH, "duplicate");
}

export function validPlanArbitrary(op: Operation): fc.Arbitrary<Plan> {
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

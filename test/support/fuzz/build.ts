// A plan made concrete: refs resolved, credentials chosen, the request line, headers and body bytes.

import type { AuthKind, Plan } from "./plans.ts";
import { Huge, RawSegment } from "./refs.ts";
import { type ResolvedRefs, resolveValue } from "./resolve.ts";
import { callerOf, type FuzzEnvironment } from "./state.ts";

export type Built = {
  method: string;
  target: string;
  headers: Array<[string, unknown]>;
  body: Buffer | null;
  used: ResolvedRefs;
};

export function authHeaders(env: FuzzEnvironment, auth: AuthKind): Array<[string, unknown]> {
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
export function percentEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function encodeQueryValue(value: unknown): string {
  return percentEncode(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
}

export async function build(env: FuzzEnvironment, plan: Plan, sequence: number): Promise<Built> {
  const used: ResolvedRefs = { caller: callerOf(plan.auth), operator: plan.auth === "admin" };
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

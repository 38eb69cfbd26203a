// Where a mutation lands in a plan, and how it is put there.
import fc from "fast-check";
import type { Body, Plan } from "./plans.ts";
import { Appended, Huge, Ref } from "./refs.ts";

export function pick<T>(items: readonly T[]): fc.Arbitrary<T> {
  return fc.constantFrom(...items);
}

/** Top-level body fields, for the field mutations. */
export function bodyFields(plan: Plan): string[] {
  const schema = plan.op.body?.schema;
  return Object.keys(schema?.properties ?? {});
}

export function withBodyValue(
  plan: Plan,
  mutate: (value: Record<string, unknown>) => unknown,
  mutation: string,
): Plan {
  const value = plan.body.kind === "json" && isObject(plan.body.value) ? { ...plan.body.value } : {};
  return { ...plan, body: { kind: "json", value: mutate(value) }, mutation };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    !(value instanceof Ref) &&
    !(value instanceof Appended) &&
    !(value instanceof Huge)
  );
}

export const SPLICE = "FUZZRAWSPLICE";

export type Weighted = { weight: number; arbitrary: fc.Arbitrary<Plan> };

/** Where a text mutation lands: a top-level body field, a path parameter or a query parameter. */
export type Location = { in: "body" | "path" | "query"; name: string };

export function locations(plan: Plan): Location[] {
  return [
    ...bodyFields(plan).map((name): Location => ({ in: "body", name })),
    ...Object.keys(plan.pathParams).map((name): Location => ({ in: "path", name })),
    ...plan.op.params.filter((p) => p.in === "query").map((p): Location => ({ in: "query", name: p.name })),
  ];
}

/** The plan with `location` set to `make(current value)`. */
export function setAt(
  plan: Plan,
  location: Location,
  make: (current: unknown) => unknown,
  mutation: string,
): Plan {
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

/** A path with every parameter filled with a plausible literal, for the whole-path mutations. */
export function fillPathTemplate(path: string): string {
  return path.replace(/\{[^}]+\}/g, "x1");
}

export function spliceBytes(body: Body, bytes: Uint8Array): Uint8Array | string {
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

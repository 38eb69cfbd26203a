// JSON Schema to fast-check: the subset our TypeBox schemas use.
import fc from "fast-check";
import type { JsonSchema } from "./openapi.ts";
import { FIELD_REFS, Ref } from "./refs.ts";

/** Generation strips lookarounds fast-check cannot generate; the full pattern still filters. */
export function generablePattern(pattern: string): string {
  return pattern.replace(/\(\?[=!][^()]*\)/g, "");
}

export function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number = schema.maxLength ?? 64;
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength;
  if (schema.format === "date") {
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    return fc.oneof(
      fc
        .integer({ min: -3, max: 200 })
        .map((days) => new Date(today + days * 86_400_000).toISOString().slice(0, 10)),
      // Four-digit years only: toISOString writes others as ±YYYYYY, which no `date` accepts, so a
      // "valid" request with one was never valid (an operation with two date filters then seldom
      // answered 2xx at all).
      fc
        .date({
          noInvalidDate: true,
          min: new Date("0000-01-01T00:00:00Z"),
          max: new Date("9999-12-31T00:00:00Z"),
        })
        .map((d) => d.toISOString().slice(0, 10)),
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

export function integerArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -(2 ** 31);
  const max = schema.maximum ?? 2 ** 31;
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
  );
}

export function objectArbitrary(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
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
/** A month of the last two years (a statement's `month`): the pattern alone mostly makes months not begun. */
const RECENT_MONTH = fc.integer({ min: 0, max: 24 }).map((back) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)).toISOString().slice(0, 7);
});

export function fieldArbitrary(name: string, schema: JsonSchema): fc.Arbitrary<unknown> {
  const kind = FIELD_REFS[name];
  const generated = schemaArbitrary(schema);
  if (name === "month")
    return fc.oneof({ weight: 6, arbitrary: RECENT_MONTH }, { weight: 1, arbitrary: generated });
  if (!kind) return generated;
  // A nullable field stays nullable: null is valid and must be exercised too.
  const nullable = (schema.anyOf ?? []).some((s: JsonSchema) => s.type === "null");
  return fc.oneof(
    { weight: 12, arbitrary: fc.nat().map((n) => new Ref(kind, n)) },
    { weight: 2, arbitrary: generated },
    ...(nullable ? [{ weight: 1, arbitrary: fc.constant(null) }] : []),
  );
}

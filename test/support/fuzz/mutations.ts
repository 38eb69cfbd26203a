// Mutations of a valid plan: the body, text in every location, the request line and headers.
import fc from "fast-check";
import {
  bodyFields,
  fillPathTemplate,
  locations,
  pick,
  SPLICE,
  setAt,
  spliceBytes,
  type Weighted,
  withBodyValue,
} from "./locations.ts";
import { badAuthArbitrary, type Plan } from "./plans.ts";
import { Appended, Huge, RawSegment, Ref } from "./refs.ts";
import {
  BAD_JSON,
  CONTENT_TYPES,
  IDEMPOTENCY_KEYS,
  ODD_SEGMENTS,
  RAW_BYTES,
  REQUEST_IDS,
  UNICODE_SAMPLES,
  WRONG_TYPES,
} from "./samples.ts";

export const CONTROL_CHARACTERS = [
  "\u0000",
  "a\u0000b",
  "\u0001",
  "\u001f",
  "\u007f",
  "\t",
  "\r\n",
  "\u0085",
];

export function bodyMutations(plan: Plan): Weighted[] {
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

export function textMutations(plan: Plan): Weighted[] {
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

export function requestMutations(plan: Plan): Weighted[] {
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

export function mutations(plan: Plan): Weighted[] {
  return [...bodyMutations(plan), ...textMutations(plan), ...requestMutations(plan)];
}

// The API as a Postman collection and an `.http` file (VS Code REST Client, JetBrains HTTP Client),
// both made from the OpenAPI document, so they name every operation the document has and nothing
// else. `npm run sdk:types` writes them beside the SDK's types; `npm run sdk:check` fails when the
// committed ones differ. Variables follow the README: BASE (the origin), API_KEY, ADMIN_TOKEN.
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  format?: string;
  minimum?: number;
};
type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: Schema };
type Operation = {
  operationId: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
};
type Document = {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
};

const METHODS = ["get", "post", "put", "patch", "delete"];
/** Values a person would type for the fields every walk-through uses; other fields get a typed blank. */
const KNOWN: Record<string, unknown> = {
  package_id: "fr-1gb-7d",
  email: "ana@example.com",
  phone: "+14155550123",
  first_name: "Ana",
  last_name: "Lima",
  name: "Acme Travel",
  amount_minor: 10000,
  reference: "bank-transfer-123",
  url: "https://hooks.example.com/esim",
};
/** Nested examples stop here: a schema deeper than this is shown as an empty value. */
const MAX_DEPTH = 4;

type MoreExample = { name: string; summary: string; body: Record<string, unknown> };
const traveller = (first_name: string, email: string) => ({ first_name, last_name: "Lima", email });
/**
 * Requests worth showing beside an operation's blank one (its required fields), after it. Each is
 * checked against the operation's body schema (checkExample), so a renamed field fails
 * `npm run sdk:types` and `sdk:check` instead of leaving a wrong example.
 */
const MORE_EXAMPLES: Record<string, MoreExample[]> = {
  createCart: [
    {
      name: "createGroupCart",
      summary: "Group order: a cart of 3 eSIMs (total = 3 x the price)",
      body: { package_id: "fr-1gb-7d", quantity: 3 },
    },
  ],
  submitOrder: [
    {
      name: "submitGroupOrder",
      summary:
        "Group order: submit a cart of 3 with one traveller per eSIM (the sandbox declines the second)",
      body: {
        cart_key: "",
        email: "ana@example.com",
        phone: "+14155550123",
        first_name: "Ana",
        last_name: "Lima",
        travellers: [
          traveller("Ana", "ana@example.com"),
          traveller("Bo", "decline@carrier.test"),
          traveller("Cy", "cy@example.com"),
        ],
      },
    },
  ],
};

/** Throws unless `value` has the schema's required fields and no field it does not name. */
function checkExample(schema: Schema, value: unknown, where: string): void {
  const choice = (schema.anyOf ?? schema.oneOf)?.find((option) => option.type !== "null");
  if (choice) {
    checkExample(choice, value, where);
    return;
  }
  if (schema.type === "array" && Array.isArray(value) && schema.items) {
    for (const [i, item] of value.entries()) checkExample(schema.items, item, `${where}[${i}]`);
    return;
  }
  if (schema.type !== "object" || typeof value !== "object" || value === null) return;
  const fields = Object.keys(value);
  for (const field of fields) {
    const property = schema.properties?.[field];
    if (property === undefined) throw new Error(`example ${where}: ${field} is not in the schema`);
    checkExample(property, (value as Record<string, unknown>)[field], `${where}.${field}`);
  }
  const missing = (schema.required ?? []).filter((field) => !fields.includes(field));
  if (missing.length > 0) throw new Error(`example ${where}: missing ${missing.join(", ")}`);
}

/** The operation's further examples, each checked against its body schema. */
function moreExamples(operation: Operation): MoreExample[] {
  const examples = MORE_EXAMPLES[operation.operationId] ?? [];
  const schema = operation.requestBody?.content?.["application/json"]?.schema;
  for (const more of examples) {
    if (schema === undefined)
      throw new Error(`example ${more.name}: ${operation.operationId} takes no JSON body`);
    checkExample(schema, more.body, more.name);
  }
  return examples;
}

export type Collections = { postman: string; http: string };

export function renderCollections(document: Document): Collections {
  const operations = listOperations(document);
  return { postman: renderPostman(document, operations), http: renderHttp(document, operations) };
}

type Listed = { method: string; path: string; operation: Operation; auth: "API_KEY" | "ADMIN_TOKEN" | null };

function listOperations(document: Document): Listed[] {
  const listed: Listed[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      const auth = schemes.includes("adminToken") ? "ADMIN_TOKEN" : schemes.length > 0 ? "API_KEY" : null;
      listed.push({ method: method.toUpperCase(), path, operation, auth });
    }
  }
  return listed;
}

function exampleBody(operation: Operation): string | null {
  const schema = operation.requestBody?.content?.["application/json"]?.schema;
  return schema ? JSON.stringify(example(schema, null, 0), null, 2) : null;
}

function example(schema: Schema, name: string | null, depth: number): unknown {
  if (name !== null && name in KNOWN) return KNOWN[name];
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  const choice = (schema.anyOf ?? schema.oneOf)?.find((option) => option.type !== "null");
  if (choice) return example(choice, name, depth);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (depth >= MAX_DEPTH) return type === "object" ? {} : type === "array" ? [] : "";
  switch (type) {
    case "object":
      return Object.fromEntries(
        (schema.required ?? []).map((key) => [key, example(schema.properties?.[key] ?? {}, key, depth + 1)]),
      );
    case "array":
      return [];
    case "integer":
    case "number":
      return schema.minimum ?? 0;
    case "boolean":
      return false;
    default:
      return schema.format === "date" ? "2026-12-01" : "";
  }
}

function pathParameters(operation: Operation): Parameter[] {
  return (operation.parameters ?? []).filter((parameter) => parameter.in === "path");
}

function queryParameters(operation: Operation): Parameter[] {
  return (operation.parameters ?? []).filter((parameter) => parameter.in === "query");
}

function renderPostman(document: Document, operations: Listed[]): string {
  const folders = new Map<string, unknown[]>();
  for (const { method, path, operation, auth } of operations) {
    const tag = operation.tags?.[0] ?? "Other";
    const body = exampleBody(operation);
    const segments = path
      .split("/")
      .filter(Boolean)
      .map((segment) => segment.replace(/^\{(.+)\}$/, ":$1"));
    const item = (name: string, body: string | null) => ({
      name,
      request: {
        method,
        auth:
          auth === null
            ? { type: "noauth" }
            : { type: "bearer", bearer: [{ key: "token", value: `{{${auth}}}`, type: "string" }] },
        header: body === null ? [] : [{ key: "Content-Type", value: "application/json" }],
        url: {
          raw: `{{BASE}}/${segments.join("/")}`,
          host: ["{{BASE}}"],
          path: segments,
          query: queryParameters(operation).map((parameter) => ({
            key: parameter.name,
            value: "",
            description: parameter.description ?? "",
            disabled: true,
          })),
          variable: pathParameters(operation).map((parameter) => ({
            key: parameter.name,
            value: "",
            description: parameter.description ?? "",
          })),
        },
        ...(body === null
          ? {}
          : { body: { mode: "raw", raw: body, options: { raw: { language: "json" } } } }),
      },
    });
    const more = moreExamples(operation).map((example) =>
      item(example.summary, JSON.stringify(example.body, null, 2)),
    );
    folders.set(tag, [
      ...(folders.get(tag) ?? []),
      item(operation.summary ?? operation.operationId, body),
      ...more,
    ]);
  }
  const collection = {
    info: {
      name: `${document.info.title} ${document.info.version}`,
      description: "Made from docs/openapi.json by `npm run sdk:types`. Set BASE, API_KEY and ADMIN_TOKEN.",
      schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
    },
    variable: [
      { key: "BASE", value: "http://localhost:3000" },
      { key: "API_KEY", value: "" },
      { key: "ADMIN_TOKEN", value: "" },
    ],
    item: [...folders].map(([name, item]) => ({ name, item })),
  };
  return `${JSON.stringify(collection, null, 2)}\n`;
}

function renderHttp(document: Document, operations: Listed[]): string {
  const variables = new Set<string>();
  const requests = operations.map(({ method, path, operation, auth }) => {
    for (const parameter of pathParameters(operation)) variables.add(parameter.name);
    const request = (summary: string, name: string, body: string | null) => {
      const lines = [
        `### ${summary}`,
        `# @name ${name}`,
        `${method} {{BASE}}${path.replace(/\{(.+?)\}/g, "{{$1}}")}`,
        ...(auth === null ? [] : [`Authorization: Bearer {{${auth}}}`]),
        ...(body === null ? [] : ["Content-Type: application/json", "", body]),
      ];
      return `${lines.join("\n")}\n`;
    };
    return [
      request(operation.summary ?? operation.operationId, operation.operationId, exampleBody(operation)),
      ...moreExamples(operation).map((more) =>
        request(more.summary, more.name, JSON.stringify(more.body, null, 2)),
      ),
    ].join("\n");
  });
  const header = [
    `# ${document.info.title} ${document.info.version}: every operation of docs/openapi.json, made by \`npm run sdk:types\`.`,
    "# Set the variables below (the path parameters too), then send a request from your editor.",
    "@BASE = http://localhost:3000",
    "@API_KEY = sand_...",
    "@ADMIN_TOKEN = dev-admin-token-change-me",
    ...[...variables].sort().map((name) => `@${name} =`),
    "",
  ];
  return `${header.join("\n")}\n${requests.join("\n")}`;
}

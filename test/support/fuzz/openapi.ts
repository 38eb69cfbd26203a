// The OpenAPI document as operations: what the fuzzer generates requests for.

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
export const HIDDEN_SERVICE_ROUTES = ["/metrics", "/openapi.json", "/docs"];
export const HTTP_METHODS = ["get", "post", "put", "patch", "delete", "head", "options"];

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

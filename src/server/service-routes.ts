// Unversioned service routes: health, readiness, metrics and the API documentation.
import type { SwaggerOptions } from "@fastify/swagger";
import { Type } from "typebox";
import type { AppContext } from "../shared/context.ts";
import { OPTIONAL_BODY } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { errorResponses } from "../shared/schemas.ts";
import { openapiWebhooks } from "../webhooks/openapi-webhooks.ts";
import { apiDescription } from "./api-guide.ts";
import { requireToken } from "./auth.ts";
import { withCodeSamples } from "./code-samples.ts";
import { DOCS_ASSETS, DOCS_CSP, DOCS_INIT_SCRIPT, readRedocBundle, renderDocsPage } from "./docs-page.ts";
import type { FailureBudget } from "./failure-budget.ts";
import type { Metrics } from "./metrics.ts";
import { DOCUMENT_SECURITY_HEADERS } from "./security-headers.ts";

const API_TITLE = "Partner eSIM Ordering API";

/**
 * @fastify/swagger marks every body required; a route marked OPTIONAL_BODY (endpoint.ts) takes
 * none as `{}`, so its document says so. The marker itself is not part of the document.
 */
function withOptionalBodies<T>(document: T): T {
  type Operation = { [OPTIONAL_BODY]?: boolean; requestBody?: { required?: boolean } };
  const paths = ((document as { paths?: unknown }).paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const methods of Object.values(paths)) {
    for (const op of Object.values(methods)) {
      if (op[OPTIONAL_BODY] !== true) continue;
      delete op[OPTIONAL_BODY];
      if (op.requestBody) op.requestBody.required = false;
    }
  }
  return document;
}

export function openapiOptions(): SwaggerOptions {
  return {
    transformObject: (built) =>
      withOptionalBodies(
        withCodeSamples("openapiObject" in built ? built.openapiObject : built.swaggerObject),
      ),
    openapi: {
      openapi: "3.1.0",
      info: {
        title: API_TITLE,
        version: "1.0.0",
        description: apiDescription(),
        license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
        contact: { name: "Partner support", email: "partners@esim.example" },
      },
      servers: [
        { url: "/", description: "This deployment (the sandbox and production each have their own host)" },
      ],
      tags: [
        { name: "Catalog", description: "Packages and B2B prices by destination." },
        { name: "Orders", description: "Carts, new eSIM orders and order history." },
        { name: "Top-ups", description: "More data for an existing eSIM." },
        { name: "Wallet", description: "The prepaid balance purchases are paid from." },
        {
          name: "Travellers",
          description:
            "What your travellers see from us: your brand on emails and install pages, and which emails they get.",
        },
        {
          name: "Operator",
          description: "Back office: partners, keys and wallet credits. Needs ADMIN_TOKEN.",
        },
        {
          name: "Webhooks",
          description:
            "Endpoints that receive signed events (Standard Webhooks), their delivery logs, and the events of " +
            "the last 30 days. The `webhooks` section documents each event's payload.",
        },
        {
          name: "Audit log",
          description: "Who changed what in your account, and when: kept at least a year.",
        },
        { name: "Service", description: "Health, readiness, metrics and documentation." },
      ],
      // Plain JSON built from the route schemas (src/webhooks/openapi-webhooks.ts).
      webhooks: openapiWebhooks() as never,
      components: {
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer", description: "`Authorization: Bearer <API_KEY>`" },
          apiKeyHeader: {
            type: "apiKey",
            in: "header",
            name: "X-API-Key",
            description: "The same key, in X-API-Key.",
          },
          adminToken: {
            type: "http",
            scheme: "bearer",
            description: "`Authorization: Bearer <ADMIN_TOKEN>`",
          },
        },
      },
    },
  };
}

const Health = Type.Object({ status: Type.String() }, { additionalProperties: false });

type ServiceRouteOptions = {
  ctx: AppContext;
  metrics: Metrics;
  checkDatabase: () => Promise<unknown>;
  /** Wrong METRICS_TOKENs, per client address (its own budget). */
  failures: FailureBudget;
};

/** The unversioned service routes: health, readiness, metrics, and the API reference. */
export async function serviceRoutes(app: App, options: ServiceRouteOptions): Promise<void> {
  healthRoutes(app, options);
  documentRoutes(app);
}

/** /healthz, /readyz and /metrics: what load balancers and Prometheus ask. */
function healthRoutes(app: App, options: ServiceRouteOptions): void {
  app.get(
    "/healthz",
    {
      schema: {
        operationId: "health",
        summary: "The process is up",
        tags: ["Service"],
        security: [],
        // A query parameter is refused here too (shared/query-names.ts): a prober sends none.
        response: { 200: Health, 400: errorResponses()[400]! },
      },
    },
    async () => ({ status: "ok" }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        operationId: "ready",
        summary: "The database is reachable",
        tags: ["Service"],
        security: [],
        response: { 200: Health, ...errorResponses("service_unavailable") },
      },
    },
    async () => {
      try {
        await options.checkDatabase();
      } catch {
        throw new ApiError("service_unavailable", "The database is not reachable.");
      }
      return { status: "ready" };
    },
  );

  app.get("/metrics", { schema: { hide: true } }, async (request, reply) => {
    const token = options.ctx.config.metrics_token;
    if (token !== null) requireToken(request, token, options.failures, "METRICS_TOKEN");
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}

/** /openapi.json, /docs and the reference page's scripts. */
function documentRoutes(app: App): void {
  // Every document is the same bytes until the process ends: built on first use, then sent as is.
  let openapi: Buffer | null = null;
  let docs: Buffer | null = null;
  let redoc: Promise<Buffer> | null = null;
  const init = Buffer.from(DOCS_INIT_SCRIPT);

  app.get("/openapi.json", { schema: { hide: true } }, async (_request, reply) => {
    openapi ??= Buffer.from(JSON.stringify(app.swagger()));
    return reply.type("application/json; charset=utf-8").send(openapi);
  });

  app.get("/docs", { schema: { hide: true } }, async (_request, reply) => {
    reply.headers(DOCUMENT_SECURITY_HEADERS).header("content-security-policy", DOCS_CSP);
    docs ??= Buffer.from(renderDocsPage(API_TITLE));
    return reply.type("text/html; charset=utf-8").send(docs);
  });

  app.get(DOCS_ASSETS.redoc, { schema: { hide: true } }, async (_request, reply) => {
    redoc ??= readRedocBundle();
    reply.header("cache-control", "public, max-age=3600");
    return reply.type("text/javascript; charset=utf-8").send(await redoc);
  });

  app.get(DOCS_ASSETS.init, { schema: { hide: true } }, async (_request, reply) => {
    return reply.type("text/javascript; charset=utf-8").send(init);
  });
}

// Unversioned service routes: health, readiness, metrics and the API documentation.
import type { SwaggerOptions } from "@fastify/swagger";
import { Type } from "typebox";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { errorResponses } from "../shared/schemas.ts";
import { requireToken } from "./auth.ts";
import { renderDocsPage } from "./docs-page.ts";
import type { Metrics } from "./metrics.ts";
import type { RateLimiter } from "./rate-limit.ts";

export function openapiOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Partner eSIM Ordering API",
        version: "1.0.0",
        description:
          "Find data packages for 190+ destinations, reserve one in a cart, buy and provision an eSIM, top it up, " +
          "and list your orders. Every purchase is paid from your prepaid wallet and is safe to retry: " +
          "submit is idempotent by `cart_key`, submit-topup by the `Idempotency-Key` header.",
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
          name: "Operator",
          description: "Back office: partners, keys and wallet credits. Needs ADMIN_TOKEN.",
        },
        { name: "Service", description: "Health, readiness, metrics and documentation." },
      ],
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

export async function serviceRoutes(
  app: App,
  options: {
    ctx: AppContext;
    metrics: Metrics;
    checkDatabase: () => Promise<unknown>;
    /** Wrong METRICS_TOKENs, per client address. */
    failures: RateLimiter;
  },
): Promise<void> {
  app.get(
    "/healthz",
    {
      schema: {
        operationId: "health",
        summary: "The process is up",
        tags: ["Service"],
        security: [],
        response: { 200: Health },
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

  // Both documents are the same bytes until the process ends: built on first use, then sent as is.
  let openapi: Buffer | null = null;
  let docs: Buffer | null = null;

  app.get("/openapi.json", { schema: { hide: true } }, async (_request, reply) => {
    openapi ??= Buffer.from(JSON.stringify(app.swagger()));
    return reply.type("application/json; charset=utf-8").send(openapi);
  });

  app.get("/docs", { schema: { hide: true } }, async (_request, reply) => {
    // One self-contained page: no scripts, fonts or styles from other hosts, works offline.
    reply.header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    docs ??= Buffer.from(renderDocsPage(app.swagger() as unknown as Record<string, unknown>));
    return reply.type("text/html; charset=utf-8").send(docs);
  });
}

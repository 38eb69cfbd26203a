// Unversioned service routes: health, readiness, metrics and the API documentation.
import type { SwaggerOptions } from "@fastify/swagger";
import { Type } from "typebox";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { errorResponses } from "../shared/schemas.ts";
import { renderDocsPage } from "./docs-page.ts";
import type { Metrics } from "./metrics.ts";

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
  options: { ctx: AppContext; metrics: Metrics; checkDatabase: () => Promise<unknown> },
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

  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });

  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  app.get("/docs", { schema: { hide: true } }, async (_request, reply) => {
    // One self-contained page: no scripts, fonts or styles from other hosts, works offline.
    reply.header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    reply.type("text/html; charset=utf-8");
    return renderDocsPage(app.swagger() as unknown as Record<string, unknown>);
  });
}

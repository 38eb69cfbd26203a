// Types every route file shares: the Fastify instance with the TypeBox provider, and the
// partner the authentication hook sets on a request.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";

export type App = FastifyInstance<
  Server,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

import type { Actor } from "./actor.ts";

export type AuthenticatedPartner = { partner_id: string; key_id: string };

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the authentication hook on every /v1 route; null elsewhere. */
    partner: AuthenticatedPartner | null;
    /** Who is making this request, for the audit log: set by the API key, ADMIN_TOKEN and console session hooks. */
    actor: Actor | null;
    /** Set on a route that answers from bytes (endpoint.ts): the JSON parser hands the body over unparsed. */
    wantsBodyBytes: boolean;
    /** The exact JSON body, on a route that answers from bytes (endpoint.ts): null elsewhere. */
    bodyBytes: Buffer | null;
  }
}

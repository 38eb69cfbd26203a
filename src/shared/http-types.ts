// Types every route file shares: the Fastify instance with the TypeBox provider, and the
// partner the authentication hook sets on a request.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import { type Actor, apiKeyActor } from "./actor.ts";

export type App = FastifyInstance<
  Server,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type AuthenticatedPartner = { partner_id: string; key_id: string };

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the authentication hook on every /v1 route; null elsewhere. */
    partner: AuthenticatedPartner | null;
    /**
     * Who is making this request, for the audit log (issue 31): the API key on /v1, the operator
     * token on /admin, the person of a console session; null on routes that change nothing.
     */
    actor: Actor | null;
    /** Set on a route that answers from bytes (endpoint.ts): the JSON parser hands the body over unparsed. */
    wantsBodyBytes: boolean;
    /** The exact JSON body, on a route that answers from bytes (endpoint.ts): null elsewhere. */
    bodyBytes: Buffer | null;
  }
}

/**
 * The request's actor: a handler behind an authentication hook always has one. On /v1 it is the
 * API key's, made here on first use (reads never need it).
 */
export function actorOf(request: FastifyRequest): Actor {
  if (request.actor === null && request.partner !== null)
    request.actor = apiKeyActor(request.partner.key_id, request.ip);
  if (request.actor === null) throw new Error("a change reached a handler without an actor");
  return request.actor;
}

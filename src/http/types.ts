// Types every route file shares: the Fastify instance with the TypeBox provider, and the
// services a route may use. Routes get them passed in; nothing is a module-level singleton.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type pg from "pg";
import type { Carrier } from "../carrier/carrier.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";

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
  }
}

export type AppContext = {
  config: Config;
  pool: pg.Pool;
  db: Kysely<Database>;
  carrier: Carrier;
};

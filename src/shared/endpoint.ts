// One endpoint, defined in its own file (Unkey's createRoute shape): its method, URL, request and
// response schemas, and its handler, made from the application context when it is registered.
// A domain's routes.ts lists its endpoints; the server registers each list under its prefix.
// The schema types the handler's request through the TypeBox provider, as an inline route would.
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
} from "fastify";
import type { AppContext } from "./context.ts";
import type { App } from "./http-types.ts";

export type Handler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider,
  FastifyBaseLogger
>;

export type Endpoint<S extends FastifySchema = FastifySchema> = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  url: string;
  schema: S;
  /** Called once per registration: state kept across requests (a cache) lives in its closure. */
  handler: (ctx: AppContext) => Handler<S>;
};

type RouteHandler = Parameters<App["route"]>[0]["handler"];

/** A defined endpoint, ready to register: its types are checked where it is defined. */
export type DefinedEndpoint = {
  method: Endpoint["method"];
  url: string;
  register(app: App, ctx: AppContext): void;
};

/** Checks the handler against its own schema, and keeps how to register it. */
export function endpoint<S extends FastifySchema>(definition: Endpoint<S>): Endpoint<S> & DefinedEndpoint {
  return {
    ...definition,
    register(app, ctx) {
      const { method, url, schema } = definition;
      app.route({ method, url, schema, handler: definition.handler(ctx) as unknown as RouteHandler });
    },
  };
}

/** Registers a domain's endpoints in the order listed: the order of the OpenAPI document. */
export function routesOf(endpoints: readonly DefinedEndpoint[]) {
  return async (app: App, ctx: AppContext): Promise<void> => {
    for (const route of endpoints) route.register(app, ctx);
  };
}

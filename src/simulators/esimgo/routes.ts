// The platform's endpoints under /v2.4 (the base URL carries the version:
// [DOC:guides/api_version_migration/]) and the sandbox's own control routes under /sandbox.
// Every handler builds an Answer; send() delivers it, or applies a fault armed for after the work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { type Answer, amount, type FakeContext, failure, ok } from "./answers.ts";
import { findBundle, listCatalogue } from "./catalogue.ts";
import { deviceEvent } from "./device.ts";
import { updateEsimSandbox } from "./esims.sql.ts";
import {
  BundlesQuery,
  CustomerRefBody,
  esimBundles,
  getEsim,
  installDetails,
  ListEsimsQuery,
  listEsimsAnswer,
  revokeBundle,
  setCustomerRef,
} from "./esims.ts";
import { ControlPatch, type FaultRule } from "./faults.ts";
import { selectOrganisation, updateOrganisation } from "./orders.sql.ts";
import { getOrder, ListOrdersQuery, listOrders, OrderBody, placeOrder } from "./orders.ts";
import { MESSAGES, NOT_FOUND_STATUS, REVOKE_REFUND_PARAM } from "./unconfirmed.ts";

export const API_PREFIX = "/v2.4";

declare module "fastify" {
  interface FastifyRequest {
    /** A fault armed for after the call's work (commit_then_500, drop_after_commit). */
    afterWork?: FaultRule;
  }
}

export async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: Answer,
): Promise<FastifyReply> {
  const fault = request.afterWork;
  if (fault?.kind === "drop_after_commit") return dropConnection(request, reply);
  if (fault?.kind === "commit_then_500")
    return reply.code(500).send({ message: fault.message ?? MESSAGES.server_error });
  if (answer.headers) reply.headers(answer.headers);
  return reply.code(answer.status).send(answer.body);
}

export function dropConnection(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  request.raw.socket.destroy();
  return reply;
}

const IccidParams = Type.Object({ iccid: Type.String({ pattern: "^[0-9]{10,22}$" }) });
const CatalogueQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  direction: Type.Optional(Type.String({ maxLength: 8 })),
  orderBy: Type.Optional(Type.String({ maxLength: 64 })),
  description: Type.Optional(Type.String({ maxLength: 200 })),
  group: Type.Optional(Type.String({ maxLength: 200 })),
  countries: Type.Optional(Type.String({ maxLength: 1000 })),
  region: Type.Optional(Type.String({ maxLength: 100 })),
});
const RevokeQuery = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal("validate"), Type.Literal("transaction")])),
  [REVOKE_REFUND_PARAM]: Type.Optional(Type.Boolean()),
});

export function registerApiRoutes(app: FastifyInstance, context: FakeContext): void {
  app.get<{ Querystring: Record<string, never> }>(
    "/catalogue",
    { schema: { querystring: CatalogueQuery } },
    (request, reply) => send(request, reply, ok(listCatalogue(request.query))),
  );
  app.get<{ Params: { name: string } }>("/catalogue/bundle/:name", (request, reply) => {
    const bundle = findBundle(request.params.name);
    return send(
      request,
      reply,
      bundle ? ok(bundle) : failure(NOT_FOUND_STATUS, MESSAGES.unknown_bundle(request.params.name)),
    );
  });
  app.post<{ Body: OrderBody }>("/orders", { schema: { body: OrderBody } }, async (request, reply) =>
    send(
      request,
      reply,
      await placeOrder(context, request.body, request.ip, context.faults.settings.async_ms),
    ),
  );
  app.get<{ Querystring: ListOrdersQuery }>(
    "/orders",
    { schema: { querystring: ListOrdersQuery } },
    async (request, reply) => send(request, reply, await listOrders(context.pool, request.query)),
  );
  app.get<{ Params: { reference: string } }>("/orders/:reference", async (request, reply) =>
    send(request, reply, await getOrder(context.pool, request.params.reference)),
  );
  app.get<{ Querystring: { reference?: string | string[] } }>(
    "/esims/assignments",
    async (request, reply) => {
      const references = [request.query.reference ?? []]
        .flat()
        .flatMap((value) => value.split(","))
        .filter(Boolean);
      return send(
        request,
        reply,
        await installDetails(context.pool, references.slice(0, 100), request.headers.accept ?? ""),
      );
    },
  );
  app.get<{ Querystring: ListEsimsQuery }>(
    "/esims",
    { schema: { querystring: ListEsimsQuery } },
    async (request, reply) => send(request, reply, await listEsimsAnswer(context.pool, request.query)),
  );
  app.put<{ Body: { iccid: string; customerRef: string } }>(
    "/esims",
    { schema: { body: CustomerRefBody } },
    async (request, reply) =>
      send(request, reply, await setCustomerRef(context.pool, request.body.iccid, request.body.customerRef)),
  );
  app.get<{ Params: { iccid: string } }>(
    "/esims/:iccid",
    { schema: { params: IccidParams } },
    async (request, reply) => send(request, reply, await getEsim(context.pool, request.params.iccid)),
  );
  app.get<{ Params: { iccid: string }; Querystring: { limit?: number; includeUsed?: boolean } }>(
    "/esims/:iccid/bundles",
    { schema: { params: IccidParams, querystring: BundlesQuery } },
    async (request, reply) =>
      send(request, reply, await esimBundles(context.pool, request.params.iccid, request.query)),
  );
  app.delete<{
    Params: { iccid: string; name: string };
    Querystring: Record<string, string | boolean | undefined>;
  }>("/esims/:iccid/bundles/:name", { schema: { querystring: RevokeQuery } }, async (request, reply) => {
    const query = {
      type: (request.query.type ?? "transaction") as "validate" | "transaction",
      refund: request.query[REVOKE_REFUND_PARAM] === true,
    };
    return send(
      request,
      reply,
      await revokeBundle(context.pool, request.params.iccid, request.params.name, query),
    );
  });
  app.get("/organisation", async (request, reply) =>
    send(request, reply, ok(organisationBody(await selectOrganisation(context.pool)))),
  );
}

/** GET /organisation: "Get Current Organisation Details" (v2.4 nav); the shape is UNCONFIRMED. */
function organisationBody(organisation: { name: string; currency: string; balance_cents: number }) {
  return {
    organisations: [
      {
        name: organisation.name,
        currency: organisation.currency,
        balance: amount(organisation.balance_cents),
      },
    ],
  };
}

const OrganisationPatch = Type.Object(
  {
    balance: Type.Optional(Type.Number({ minimum: 0, maximum: 1e9 })),
    refundsEnabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const DeviceBody = Type.Object(
  {
    event: Type.Union([Type.Literal("install"), Type.Literal("use_data"), Type.Literal("expire")]),
    bytes: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e13 })),
  },
  { additionalProperties: false },
);
const EsimPatch = Type.Object(
  { incompatible: Type.Optional(Type.Boolean()), deactivated: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** What only the sandbox offers: faults, the account's settings, a device's events. */
export function registerSandboxRoutes(app: FastifyInstance, context: FakeContext): void {
  app.get("/sandbox/control", async () => context.faults.describe());
  app.post<{ Body: ControlPatch }>(
    "/sandbox/control",
    { schema: { body: ControlPatch } },
    async (request) => {
      context.faults.apply(request.body);
      return context.faults.describe();
    },
  );
  const organisation = async () => {
    const row = await selectOrganisation(context.pool);
    return { ...organisationBody(row).organisations[0], refundsEnabled: row.refunds_enabled };
  };
  app.get("/sandbox/organisation", organisation);
  app.post<{ Body: { balance?: number; refundsEnabled?: boolean } }>(
    "/sandbox/organisation",
    { schema: { body: OrganisationPatch } },
    async (request) => {
      const { balance, refundsEnabled } = request.body;
      await updateOrganisation(context.pool, {
        balance_cents: balance === undefined ? undefined : Math.round(balance * 100),
        refunds_enabled: refundsEnabled,
      });
      return organisation();
    },
  );
  app.post<{ Params: { iccid: string }; Body: { event: "install" | "use_data" | "expire"; bytes?: number } }>(
    "/sandbox/esims/:iccid/events",
    { schema: { params: IccidParams, body: DeviceBody } },
    async (request, reply) =>
      send(request, reply, await deviceEvent(context, request.params.iccid, request.body)),
  );
  app.post<{ Params: { iccid: string }; Body: { incompatible?: boolean; deactivated?: boolean } }>(
    "/sandbox/esims/:iccid",
    { schema: { params: IccidParams, body: EsimPatch } },
    async (request, reply) => {
      const found = await updateEsimSandbox(context.pool, request.params.iccid, request.body);
      return send(
        request,
        reply,
        found ? ok({ status: "success" }) : failure(400, MESSAGES.unknown_iccid(request.params.iccid)),
      );
    },
  );
}

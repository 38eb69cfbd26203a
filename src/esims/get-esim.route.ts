// GET /v1/esims/{iccid}: one of the partner's eSIMs, its state, usage, bundles and install kit.
import type { FastifyReply } from "fastify";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { getEsimBody } from "./get-esim.ts";
import { IccidParams } from "./iccid-param.ts";
import { Esim } from "./render-esim.ts";

/**
 * JSON.stringify instead of the schema's serializer: the Esim has a dozen nullable fields, and
 * fast-json-stringify runs a validator on every `anyOf` branch to pick one, which cost more than the
 * query (bench esim-read). renderEsim's type is the schema's `Static`, so the shape is the same.
 * The bytes come from the per-process cache of rendered eSIMs (esim-cache.ts); Fastify sends a
 * Buffer as is.
 */
function sendEsim(reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(body);
}

export const getEsimRoute = endpoint({
  method: "GET",
  url: "/esims/:iccid",
  schema: {
    operationId: "getEsim",
    summary: "One of your eSIMs",
    description:
      "Its status, usage (`usage.updated_at` says how fresh), bundles (the original first, then top-ups) " +
      "and everything needed to install it: the LPA string, the iOS and Android install links, the QR image.",
    tags: ["eSIMs"],
    security: PARTNER_SECURITY,
    params: IccidParams,
    response: {
      200: Esim,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "ip_not_allowed",
        "invalid_iccid",
        "esim_not_found",
      ),
    },
  },
  // The pool, not ctx.db: the read runs as a prepared statement (esims.sql.ts); the cache is per pool.
  handler: (ctx) => async (request, reply) =>
    sendEsim(
      reply,
      await getEsimBody(
        ctx.pool,
        request.partner!.partner_id,
        request.params.iccid,
        ctx.config.public_base_url,
      ),
    ),
});

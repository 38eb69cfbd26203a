// GET /v1/esim/destination/{destination_code}/packages (spec 4.1), behind the partner API's
// authentication hook. Answers from the in-process cache of serialized bodies.
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import {
  CACHE_HEADERS,
  type DestinationPackagesBody,
  DestinationPackagesResponse,
  partnerDestinationAnswer,
  rememberedAnswer,
} from "./list-destination-packages.ts";
import { cachedPartnerPriceList } from "./partner-prices.ts";

/** Partners may reuse a response for a minute; the ETag makes revalidation after that cheap. */
const CACHE_CONTROL = "private, max-age=60";
/** Entity tags compared per If-None-Match header; a longer list is not a real client. */
const MAX_IF_NONE_MATCH_TAGS = 64;

const Params = Type.Object({
  destination_code: Type.String({
    pattern: "^[A-Za-z]{2}$",
    description: "ISO 3166-1 alpha-2 code, case-insensitive (`FR` or `fr`).",
  }),
});

const NotModified = Type.Null({
  description: "Not modified: the If-None-Match header names the current ETag. No body.",
  headers: CACHE_HEADERS,
});

function opaqueTag(tag: string): string {
  return tag.startsWith("W/") ? tag.slice(2) : tag;
}

/** RFC 9110 13.1.2: If-None-Match uses the weak comparison; `*` matches any current body. */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === "*") return true;
  const current = opaqueTag(etag);
  const tags = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.slice(0, MAX_IF_NONE_MATCH_TAGS).some((tag) => opaqueTag(tag) === current);
}

/** The body is already JSON bytes: Fastify sends a Buffer as is, skipping response serialization. */
function sendSerialized(reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(body);
}

/** No payload at all: Fastify then sends neither a body nor a Content-Length (RFC 9110 15.4.5). */
function sendNotModified(reply: FastifyReply): FastifyReply {
  return reply.code(304).send();
}

/** The body with its validators, or 304 when the client already holds it. */
function sendAnswer(
  if_none_match: string | undefined,
  reply: FastifyReply,
  { body, etag }: DestinationPackagesBody,
): void {
  reply.header("etag", etag).header("cache-control", CACHE_CONTROL);
  if (ifNoneMatchMatches(if_none_match, etag)) sendNotModified(reply);
  else sendSerialized(reply, body);
}

export const listDestinationPackagesRoute = endpoint({
  method: "GET",
  url: "/esim/destination/:destination_code/packages",
  schema: {
    operationId: "listDestinationPackages",
    summary: "List the packages and B2B prices of a destination",
    description:
      "Returns the active packages covering a destination, with the wholesale price the wallet is " +
      "debited (your price list), the list price and a recommended retail price. Supports conditional requests: the response carries a " +
      "strong `ETag`; send it back in `If-None-Match` to get `304 Not Modified` while the catalog is " +
      "unchanged.",
    tags: ["Catalog"],
    security: PARTNER_SECURITY,
    params: Params,
    response: {
      200: DestinationPackagesResponse,
      304: NotModified,
      ...errorResponses("destination_not_found", "unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => {
    const priceListOf = (partner_id: string) => cachedPartnerPriceList(ctx.pool, ctx.db, partner_id);
    // Not async: an answer already served to this partner at the current catalog version is sent
    // with no promise and no microtask (the hot path); anything else goes through the caches.
    return (request, reply) => {
      const partner_id = request.partner!.partner_id;
      const code = request.params.destination_code;
      const answer = rememberedAnswer(ctx.pool, partner_id, code);
      if (answer !== undefined) {
        sendAnswer(request.headers["if-none-match"], reply, answer);
        return;
      }
      return partnerDestinationAnswer(ctx.pool, partner_id, code, priceListOf).then((loaded) =>
        sendAnswer(request.headers["if-none-match"], reply, loaded),
      );
    };
  },
});

// GET /v1/esim/destinations, behind the partner API's authentication hook. Answers like discovery:
// from the in-process caches of serialized bodies, with an ETag and 304 on If-None-Match.
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { ifNoneMatchMatches } from "./list-destination-packages.route.ts";
import type { DestinationPackagesBody } from "./list-destination-packages.ts";
import { CACHE_HEADERS } from "./list-destination-packages.ts";
import { DestinationsResponse, partnerDestinations, rememberedDestinations } from "./list-destinations.ts";
import { cachedPartnerPriceList } from "./partner-prices.ts";

/** As discovery: partners may reuse the list for a minute, and revalidate cheaply after. */
const CACHE_CONTROL = "private, max-age=60";

const NotModified = Type.Null({
  description: "Not modified: the If-None-Match header names the current ETag. No body.",
  headers: CACHE_HEADERS,
});

function sendAnswer(
  if_none_match: string | undefined,
  reply: FastifyReply,
  answer: DestinationPackagesBody,
): void {
  reply.header("etag", answer.etag).header("cache-control", CACHE_CONTROL);
  if (ifNoneMatchMatches(if_none_match, answer.etag)) reply.code(304).send();
  else reply.type("application/json; charset=utf-8").send(answer.body);
}

export const listDestinationsRoute = endpoint({
  method: "GET",
  url: "/esim/destinations",
  schema: {
    operationId: "listDestinations",
    summary: "List the destinations on sale, with package counts and your cheapest price",
    description:
      "Every destination with at least one active package: how many packages its packages endpoint " +
      "returns (regional and global ones included) and the cheapest of them at your prices " +
      "(`from_price`, after your price list). Changes with the catalog and your pricing; supports " +
      "conditional requests like discovery (`ETag`, `If-None-Match` -> 304).",
    tags: ["Catalog"],
    security: PARTNER_SECURITY,
    response: {
      200: DestinationsResponse,
      304: NotModified,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => {
    const priceListOf = (partner_id: string) => cachedPartnerPriceList(ctx.pool, ctx.db, partner_id);
    // Not async, as discovery: a remembered answer is sent with no promise.
    return (request, reply) => {
      const partner_id = request.partner!.partner_id;
      const answer = rememberedDestinations(ctx.pool, partner_id);
      if (answer !== undefined) {
        sendAnswer(request.headers["if-none-match"], reply, answer);
        return;
      }
      return partnerDestinations(ctx.pool, partner_id, priceListOf).then((loaded) =>
        sendAnswer(request.headers["if-none-match"], reply, loaded),
      );
    };
  },
});

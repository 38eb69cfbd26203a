// GET /v1/esims/{iccid}/qr.png: the QR code of the eSIM's LPA string, for apps that show it.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import {
  createQrPngCache,
  esimQrPng,
  QR_DEFAULT_SIZE_PX,
  QR_MAX_SIZE_PX,
  QR_MIN_SIZE_PX,
} from "./esim-qr-png.ts";
import { IccidParams } from "./iccid-param.ts";

export const getEsimQrPngRoute = endpoint({
  method: "GET",
  url: "/esims/:iccid/qr.png",
  schema: {
    operationId: "getEsimQrPng",
    summary: "The QR code of one of your eSIMs",
    description:
      "A PNG of `installation.qr_code` (the LPA string), `size` pixels square, for an app to show on " +
      "another screen. The image of an eSIM never changes; it may be cached privately.",
    tags: ["eSIMs"],
    security: PARTNER_SECURITY,
    params: IccidParams,
    querystring: Type.Object(
      {
        size: Type.Optional(
          Type.String({
            pattern: "^[0-9]{1,5}$",
            description: `Pixels, ${QR_MIN_SIZE_PX}-${QR_MAX_SIZE_PX}, default ${QR_DEFAULT_SIZE_PX}.`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    response: {
      200: {
        description: "The QR code image.",
        // Bytes: Fastify sends a Buffer as it is, without a serializer.
        content: { "image/png": { schema: Type.Unsafe<Buffer>({ type: "string", format: "binary" }) } },
      },
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "ip_not_allowed",
        "invalid_iccid",
        "esim_not_found",
      ),
    },
  },
  handler: (ctx) => {
    // One cache per registered app: the images live as long as the process serving them.
    const cache = createQrPngCache();
    return async (request, reply) => {
      const size = request.query.size;
      const png = await esimQrPng(ctx.db, cache, {
        partner_id: request.partner!.partner_id,
        iccid: request.params.iccid,
        size_px: size === undefined ? QR_DEFAULT_SIZE_PX : Number(size),
      });
      return reply.type("image/png").header("cache-control", "private, max-age=86400").send(png);
    };
  },
});

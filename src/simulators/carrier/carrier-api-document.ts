// The OpenAPI document of our HTTP carrier protocol (docs/carrier-api.md): what a carrier's bundle
// and usage system implements for us. Built from the schemas the sandbox simulator validates with
// and the adapter parses with, so the document cannot drift from either; the committed copy is
// docs/carrier-api.openapi.json (`npm run carrier-api:write`, checked by a test).
import { Type } from "typebox";
import { EsimSignalSchema } from "../../protocols/esim-signal.ts";
import { ProvisionProfileBody } from "./provision-profile.ts";
import { TopUpBody } from "./top-up.ts";

const json = (schema: object, description: string) => ({
  description,
  content: { "application/json": { schema } },
});
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const Profile = Type.Object({
  iccid: Type.String({ pattern: "^89[0-9]{17,18}$", description: "Luhn check digit included." }),
  smdp_address: Type.String({ maxLength: 253 }),
  activation_code: Type.String({ pattern: "^[0-9A-Z-]{1,255}$", description: "The matching ID." }),
});
const Refused = Type.Object({ error: Type.Literal("refused"), reason: Type.String({ maxLength: 500 }) });
const Unavailable = Type.Object({ error: Type.Literal("unavailable"), reason: Type.String() });
const NotFound = Type.Object({ error: Type.Literal("not_found") });
const CancelBody = Type.Object(
  {
    reference: Type.String({ minLength: 1, maxLength: 200, description: "The order being refunded." }),
    iccid: Type.String({ pattern: "^89[0-9]{17,18}$" }),
  },
  { additionalProperties: false },
);

const failures = {
  "401": json(Type.Object({ error: Type.Literal("unauthorized") }), "Wrong or missing bearer token."),
  "422": json(
    ref("Refused"),
    "A definitive refusal, recorded for the reference: asking again gets it again.",
  ),
  "503": json(ref("Unavailable"), "Not now: the outcome is unknown; we ask again with the same reference."),
};

export function carrierApiDocument() {
  return {
    openapi: "3.1.0",
    info: {
      title: "eSIM ordering service: carrier bundle and usage API",
      version: "1.0.0",
      description:
        "What a carrier's bundle and usage system implements for the eSIM ordering service (docs/carrier-api.md). " +
        "Every call carries `Authorization: Bearer <CARRIER_API_KEY>`. Every write is idempotent by `reference`.",
    },
    servers: [
      { url: "https://carrier.example/esim-api", description: "The carrier's base URL: our CARRIER_URL." },
    ],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        ProvisionProfileBody,
        TopUpBody,
        Profile,
        EsimSignal: EsimSignalSchema,
        CancelBody,
        Refused,
        Unavailable,
        NotFound,
      },
    },
    security: [{ bearer: [] }],
    paths: carrierApiPaths(),
  };
}

/** The protocol's endpoints, one per path (docs/carrier-api.md). */
function carrierApiPaths() {
  return { ...writePaths(), ...readPaths() };
}

/** The calls that change something: each idempotent by reference. */
function writePaths() {
  return {
    "/profiles": {
      post: {
        operationId: "provisionProfile",
        summary:
          "A new eSIM: a profile and its first bundle (or, with `profile`, the bundle on an SM-DP+ profile)",
        requestBody: { required: true, ...json(ref("ProvisionProfileBody"), "Idempotent by reference.") },
        responses: {
          "200": json(ref("Profile"), "The profile (the same one for a repeated reference)."),
          ...failures,
        },
      },
    },
    "/topups": {
      post: {
        operationId: "topUp",
        summary: "A bundle queued on an existing eSIM",
        requestBody: { required: true, ...json(ref("TopUpBody"), "Idempotent by reference.") },
        responses: {
          "200": json(Type.Object({ iccid: Type.String() }), "The ICCID topped up."),
          ...failures,
        },
      },
    },
    "/profiles/cancel": {
      post: {
        operationId: "cancelProfile",
        summary: "A refund of a new eSIM: cancel its unused profile and every bundle on it",
        requestBody: { required: true, ...json(ref("CancelBody"), "Idempotent by reference.") },
        responses: {
          "200": json(CancelBody, "Cancelled now or earlier: the reference and ICCID asked for."),
          ...failures,
        },
      },
    },
    "/bundles/cancel": {
      post: {
        operationId: "cancelBundle",
        summary: "A refund of a top-up: cancel its bundle while still queued and unused",
        requestBody: { required: true, ...json(ref("CancelBody"), "Idempotent by reference.") },
        responses: {
          "200": json(CancelBody, "Cancelled now or earlier: the reference and ICCID asked for."),
          ...failures,
        },
      },
    },
  };
}

/** The calls that only read. */
function readPaths() {
  return {
    "/outcomes/{reference}": {
      get: {
        operationId: "lookUpOutcome",
        summary: "What was done for a reference, doing nothing",
        parameters: [
          { name: "reference", in: "path", required: true, schema: { type: "string", maxLength: 200 } },
        ],
        responses: {
          "200": json(
            Type.Union([
              Type.Object({ kind: Type.Literal("profile"), ...Profile.properties }),
              Type.Object({ kind: Type.Literal("topup"), iccid: Type.String() }),
            ]),
            "The profile or top-up made for it.",
          ),
          "404": json(ref("NotFound"), "Never provisioned: definitive."),
          ...failures,
        },
      },
    },
    "/esims/{iccid}": {
      get: {
        operationId: "esimState",
        summary: "One eSIM's profile state and per-bundle usage (the pull sync)",
        parameters: [
          {
            name: "iccid",
            in: "path",
            required: true,
            schema: { type: "string", pattern: "^89[0-9]{17,18}$" },
          },
        ],
        responses: {
          "200": json(ref("EsimSignal"), "The eSIM as the carrier sees it now."),
          "404": json(ref("NotFound"), "Unknown ICCID."),
          ...failures,
        },
      },
    },
  };
}

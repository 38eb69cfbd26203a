// The Esim object of the contract ("eSIMs"), rendered from the eSIM row and its bundles. Pure and
// deterministic, so the same state renders to the same bytes (events and webhooks reuse it).
import { type Static, Type } from "typebox";
import type { BundleStatus, EsimStatus } from "../db/schema.ts";
import { installKit, installPageUrl } from "../shared/install-kit.ts";
import { rfc3339 } from "../shared/time.ts";

const Instant = Type.Union([Type.String({ format: "date-time" }), Type.Null()]);
const Megabytes = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);

/** The contract's eSIM statuses, in the order they move (a top-up may move one back). */
export const EsimStatusSchema = Type.Union([
  Type.Literal("released"),
  Type.Literal("installed"),
  Type.Literal("active"),
  Type.Literal("depleted"),
  Type.Literal("expired"),
  Type.Literal("deleted"),
  Type.Literal("cancelled"),
]);

export const Bundle = Type.Object(
  {
    order_id: Type.String({ description: "The order that bought this bundle." }),
    package_id: Type.String(),
    name: Type.String(),
    data_mb: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "Null: unlimited." }),
    data_used_mb: Type.Integer({ minimum: 0 }),
    validity_days: Type.Integer({ minimum: 1 }),
    status: Type.Union([
      Type.Literal("queued"),
      Type.Literal("active"),
      Type.Literal("depleted"),
      Type.Literal("expired"),
      Type.Literal("cancelled"),
    ]),
    activated_at: Instant,
    expires_at: Instant,
  },
  { additionalProperties: false },
);

export const Esim = Type.Object(
  {
    iccid: Type.String({ pattern: "^89[0-9]{17,18}$" }),
    order_id: Type.String({ description: "The order that bought the eSIM." }),
    client_reference: Type.Union([Type.String(), Type.Null()], { description: "That order's." }),
    created_at: Type.String({ format: "date-time" }),
    status: Type.Union(EsimStatusSchema.anyOf, {
      description:
        "Moves forward only (released, installed, active, depleted, expired, deleted, cancelled), " +
        "except that a top-up brings a depleted or expired eSIM back to active or installed.",
    }),
    installed_at: Instant,
    activated_at: Instant,
    expires_at: Instant,
    usage: Type.Object(
      {
        data_total_mb: Megabytes,
        data_used_mb: Type.Integer({ minimum: 0 }),
        data_remaining_mb: Megabytes,
        updated_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
          description: "How fresh the figures are: the carrier's time of the newest usage applied.",
        }),
      },
      {
        additionalProperties: false,
        description: "Totals are null when a bundle is unlimited. Cancelled bundles do not count.",
      },
    ),
    bundles: Type.Array(Bundle, { description: "The original bundle first, then top-ups in order." }),
    installation: Type.Object(
      {
        qr_code: Type.String({ description: "The LPA string `LPA:1$<smdp_address>$<activation_code>`." }),
        activation_code: Type.String({ description: "The matching ID, for manual entry." }),
        smdp_address: Type.String(),
        ios_install_url: Type.String({ description: "Opens the iOS eSIM installer (iOS 17.4+)." }),
        android_install_url: Type.String({ description: "Opens the Android eSIM installer." }),
        qr_png_url: Type.String({ description: "Path of this eSIM's QR code as a PNG image." }),
        install_page_url: Type.String({
          format: "uri",
          description:
            "The traveller's install page: the QR code, the LPA string, the iPhone and Android links and the " +
            "steps, in the order's language, then usage and validity once installed. No sign-in, not indexed; " +
            "its address is unguessable: give it only to the traveller. A refunded eSIM's page says so.",
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type EsimBody = Static<typeof Esim>;
export type BundleBody = Static<typeof Bundle>;

/** The eSIM row as render needs it: any query that selects these columns can be rendered. */
export type EsimState = {
  iccid: string;
  order_id: string;
  client_reference: string | null;
  created_at: Date;
  status: EsimStatus;
  installed_at: Date | null;
  activated_at: Date | null;
  expires_at: Date | null;
  usage_updated_at: Date | null;
  smdp_address: string;
  activation_code: string;
  install_token: string;
};

/** A bundle row; instants as a Date (a table row) or an ISO 8601 string (json_agg). */
export type BundleState = {
  order_id: string;
  package_id: string;
  name: string;
  data_mb: number | null;
  data_used_mb: number;
  validity_days: number;
  status: BundleStatus;
  activated_at: Date | string | null;
  expires_at: Date | string | null;
};

/** The path of the QR image route, as the Esim names it (relative to the API's origin). */
export function qrPngPath(iccid: string): string {
  return `/v1/esims/${iccid}/qr.png`;
}

function instant(value: Date | string | null): string | null {
  if (value === null) return null;
  return rfc3339(typeof value === "string" ? new Date(value) : value);
}

function renderUsage(esim: EsimState, bundles: readonly BundleState[]): EsimBody["usage"] {
  // A cancelled bundle was refunded: it neither adds data nor counts as unlimited.
  const counted = bundles.filter((bundle) => bundle.status !== "cancelled");
  const data_used_mb = counted.reduce((sum, bundle) => sum + bundle.data_used_mb, 0);
  const unlimited = counted.some((bundle) => bundle.data_mb === null);
  // What is left can still be used only on a bundle that is queued or active.
  const remaining = counted
    .filter((bundle) => bundle.status === "queued" || bundle.status === "active")
    .reduce((sum, bundle) => sum + Math.max((bundle.data_mb ?? 0) - bundle.data_used_mb, 0), 0);
  return {
    data_total_mb: unlimited ? null : counted.reduce((sum, bundle) => sum + (bundle.data_mb ?? 0), 0),
    data_used_mb,
    data_remaining_mb: unlimited ? null : remaining,
    updated_at: instant(esim.usage_updated_at),
  };
}

/** `public_base_url`: PUBLIC_BASE_URL, where travellers reach the install page. */
export function renderEsim(
  esim: EsimState,
  bundles: readonly BundleState[],
  public_base_url: string,
): EsimBody {
  return {
    iccid: esim.iccid,
    order_id: esim.order_id,
    client_reference: esim.client_reference,
    created_at: rfc3339(esim.created_at),
    status: esim.status,
    installed_at: instant(esim.installed_at),
    activated_at: instant(esim.activated_at),
    expires_at: instant(esim.expires_at),
    usage: renderUsage(esim, bundles),
    bundles: bundles.map((bundle) => ({
      order_id: bundle.order_id,
      package_id: bundle.package_id,
      name: bundle.name,
      data_mb: bundle.data_mb,
      data_used_mb: bundle.data_used_mb,
      validity_days: bundle.validity_days,
      status: bundle.status,
      activated_at: instant(bundle.activated_at),
      expires_at: instant(bundle.expires_at),
    })),
    installation: {
      ...installKit(esim.smdp_address, esim.activation_code),
      qr_png_url: qrPngPath(esim.iccid),
      install_page_url: installPageUrl(public_base_url, esim.install_token),
    },
  };
}

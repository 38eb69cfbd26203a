// The wire shape of an eSIM signal (`EsimSignal` in carrier-api.ts), as the carrier sends it in a
// callback body and in answer to GET /esims/:iccid. One TypeBox schema validates both: the
// callback route declares it, the HTTP adapter checks a pulled answer against it.
import { type Static, Type } from "typebox";
import { Value } from "typebox/value";
import { isValidIccid } from "../lib/luhn.ts";
import type { EsimSignal } from "./carrier-api.ts";

/** An eSIM carries its original bundle and its top-ups; a thousand is far beyond any real one. */
export const MAX_SIGNAL_BUNDLES = 1_000;
/** Megabytes a bundle may hold or use: 10 TB, a bound, not a product. */
const MAX_DATA_MB = 10_000_000;

const Instant = Type.String({ format: "date-time", maxLength: 40 });
const MaybeInstant = Type.Union([Instant, Type.Null()]);

export const CarrierBundleSchema = Type.Object(
  {
    reference: Type.String({ minLength: 1, maxLength: 200 }),
    status: Type.Union([
      Type.Literal("queued"),
      Type.Literal("active"),
      Type.Literal("depleted"),
      Type.Literal("expired"),
    ]),
    data_mb: Type.Union([Type.Integer({ minimum: 1, maximum: MAX_DATA_MB }), Type.Null()]),
    data_used_mb: Type.Integer({ minimum: 0, maximum: MAX_DATA_MB }),
    activated_at: MaybeInstant,
    expires_at: MaybeInstant,
  },
  { additionalProperties: false },
);

export const EsimSignalSchema = Type.Object(
  {
    iccid: Type.String({ pattern: "^89[0-9]{17,18}$" }),
    as_of: Instant,
    profile: Type.Object(
      {
        state: Type.Union([Type.Literal("released"), Type.Literal("installed"), Type.Literal("deleted")]),
        installed_at: MaybeInstant,
        deleted_at: MaybeInstant,
      },
      { additionalProperties: false },
    ),
    bundles: Type.Array(CarrierBundleSchema, { maxItems: MAX_SIGNAL_BUNDLES }),
  },
  { additionalProperties: false, description: "One eSIM as the carrier saw it at `as_of`." },
);

// The schema and the port's type describe the same object; this fails to compile if they drift.
const _same: EsimSignal = {} as Static<typeof EsimSignalSchema>;
void _same;

/** The signal, or null when the body is not one (shape, ICCID check digit, or an unparsable time). */
export function parseEsimSignal(body: unknown): EsimSignal | null {
  if (!Value.Check(EsimSignalSchema, body)) return null;
  const signal = body as EsimSignal;
  if (!isValidIccid(signal.iccid)) return null;
  const instants = [
    signal.as_of,
    signal.profile.installed_at,
    signal.profile.deleted_at,
    ...signal.bundles.flatMap((bundle) => [bundle.activated_at, bundle.expires_at]),
  ];
  return instants.every((instant) => instant === null || !Number.isNaN(Date.parse(instant))) ? signal : null;
}

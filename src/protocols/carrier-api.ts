// The carrier API's answers we rely on (our HTTP carrier protocol: bundles, top-ups, usage), each
// with its source. The protocol is our own: its public source is the carrier API document we
// publish to carriers, docs/carrier-api.md and docs/carrier-api.openapi.json (built by
// src/simulators/carrier/carrier-api-document.ts), so "source" names that document's operation and response.
// test/protocols.carrier-api.test.ts checks the table against the published document, our adapter
// (src/carrier/carrier-api/http-carrier.ts) against the table (a peer answering each row), and the carrier simulator,
// driven into each situation, against the table: neither is checked against the other.

const DOCUMENT = "docs/carrier-api.openapi.json";

export type CarrierApiOperation =
  | "provisionProfile"
  | "topUp"
  | "cancelProfile"
  | "cancelBundle"
  | "lookUpOutcome"
  | "esimState";

/** Each operation: its method and path as published, and the fields a 200 must carry. */
export const CARRIER_API_OPERATIONS = {
  provisionProfile: {
    method: "POST",
    path: "/profiles",
    ok_fields: ["iccid", "smdp_address", "activation_code"],
  },
  topUp: { method: "POST", path: "/topups", ok_fields: ["iccid"] },
  cancelProfile: { method: "POST", path: "/profiles/cancel", ok_fields: ["reference", "iccid"] },
  cancelBundle: { method: "POST", path: "/bundles/cancel", ok_fields: ["reference", "iccid"] },
  lookUpOutcome: { method: "GET", path: "/outcomes/{reference}", ok_fields: ["kind", "iccid"] },
  esimState: { method: "GET", path: "/esims/{iccid}", ok_fields: ["iccid", "as_of", "profile", "bundles"] },
} as const satisfies Record<
  CarrierApiOperation,
  { method: string; path: string; ok_fields: readonly string[] }
>;

/** What our adapter makes of an answer: the Carrier port's outcome kinds. */
export type CarrierOutcomeKind = "ok" | "refused" | "unavailable" | "not_found";

export type CarrierApiAnswer = {
  operation: CarrierApiOperation;
  status: 200 | 401 | 404 | 422 | 503;
  /** The body's `error` value; null for a 200, whose shape is the operation's ok_fields. */
  error: "unauthorized" | "not_found" | "refused" | "unavailable" | null;
  outcome: CarrierOutcomeKind;
  source: string;
};

const READS: readonly CarrierApiOperation[] = ["lookUpOutcome", "esimState"];

/**
 * Every answer of every operation. A 422 is a definitive refusal, except for esimState, whose port
 * has no refusal (a pull that is refused is asked again later); a 401 is our credentials, so
 * unknown for the call (we never give up an order for it); a 404 is "not found" for the reads only.
 */
export const CARRIER_API_ANSWERS: readonly CarrierApiAnswer[] = Object.entries(
  CARRIER_API_OPERATIONS,
).flatMap(([name, operation]) => {
  const op = name as CarrierApiOperation;
  const at = (status: number, what: string) =>
    `${DOCUMENT} paths["${operation.path}"].${operation.method.toLowerCase()}.responses["${status}"]: ${what}`;
  const answers: CarrierApiAnswer[] = [
    { operation: op, status: 200, error: null, outcome: "ok", source: at(200, "done") },
    {
      operation: op,
      status: 422,
      error: "refused",
      outcome: op === "esimState" ? "unavailable" : "refused",
      source: at(422, "a definitive refusal, recorded for the reference"),
    },
    {
      operation: op,
      status: 503,
      error: "unavailable",
      outcome: "unavailable",
      source: at(503, "not now: the outcome is unknown"),
    },
    {
      operation: op,
      status: 401,
      error: "unauthorized",
      outcome: "unavailable",
      source: at(401, "wrong or missing bearer token"),
    },
  ];
  if (READS.includes(op)) {
    answers.push({
      operation: op,
      status: 404,
      error: "not_found",
      outcome: "not_found",
      source: at(404, "not found"),
    });
  }
  return answers;
});

// After the sale (contract "eSIMs"): what the carrier knows of one eSIM over time. The carrier
// reports it as a whole snapshot, pushed (a callback) or pulled (esimState); the receiver merges
// snapshots so that a late or repeated one changes nothing (src/esims/apply-signal.ts).

/** The SM-DP+'s view of the profile: released (never downloaded), installed on a device, deleted. */
export type ProfileState = "released" | "installed" | "deleted";
/** The bundle system's view of one bundle (one of our orders, named by our reference). */
export type CarrierBundleStatus = "queued" | "active" | "depleted" | "expired";

export type CarrierBundle = {
  /** Our reference: the order that bought the bundle. */
  reference: string;
  status: CarrierBundleStatus;
  /** null: unlimited. */
  data_mb: number | null;
  data_used_mb: number;
  /** RFC 3339, or null while queued. */
  activated_at: string | null;
  expires_at: string | null;
};

/** One eSIM as the carrier saw it at `as_of`: the unit of every signal, pushed or pulled. */
export type EsimSignal = {
  iccid: string;
  /** The carrier's time of this snapshot (RFC 3339): how fresh the usage figures are. */
  as_of: string;
  profile: { state: ProfileState; installed_at: string | null; deleted_at: string | null };
  /** Oldest first; at most MAX_SIGNAL_BUNDLES. */
  bundles: CarrierBundle[];
};

/** What a sandbox partner may make the simulated carrier do (contract: sandbox simulate). */
export type SimulatedEvent = { event: "install" | "use_data" | "expire" | "delete"; data_mb?: number };

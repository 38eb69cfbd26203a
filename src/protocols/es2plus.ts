// The ES2+ codes and message shapes we rely on, each with its public source, written from the
// sources and not from our client: a simulator written beside the client agrees with the client's
// mistakes (issue #30: we read DownloadOrder's "ICCID not available" as 8.2.1/3.7 and our
// simulator answered 3.7 too, where SGP.22 says 8.2.1/3.3). The SM-DP+ simulator answers from this
// table; test/protocols.es2plus.test.ts checks our client's constants (es2plus/messages.ts) and
// the simulator's answers against it, and test/carrier.es2plus.pysim.test.ts checks the messages
// both send with osmocom pySim's ES2+ definitions.
//
// Sources:
//   SGP.22 = GSMA SGP.22 "RSP Technical Specification" v2.5: section 5.3.x is the ES2+ function,
//            its "specific status codes" table; 6.5.1.x the JSON binding's headers.
//   pySim  = osmocom pySim at commit 597f1e0398bb81d6832dc92ee4dfdcada59d3d82,
//            pySim/esim/es2p.py and pySim/esim/http_json_api.py (file:line).

export type Es2Code = {
  subjectCode: string;
  reasonCode: string;
  /** The subject and reason as the source names them. */
  meaning: string;
  /** Where the code is defined for the situation we use it for. */
  source: string;
};

const SGP22 = "SGP.22 v2.5";
/** Codes every ES2+ function may answer (SGP.22's common subject and reason codes). */
const COMMON = `${SGP22} common subject and reason codes (chapter 5, function execution status)`;

/**
 * Keyed by what the code means to us; es2plus/messages.ts's STATUS uses the same keys for the codes
 * the client acts on, and the test checks each one against its entry here.
 */
export const ES2PLUS_CODES = {
  requesterUnknown: {
    subjectCode: "1.1",
    reasonCode: "1.1",
    meaning: "Function Requester / Unknown",
    source: COMMON,
  },
  executionError: {
    subjectCode: "1.2",
    reasonCode: "4.2",
    meaning: "Function Provider / Execution Error",
    source: COMMON,
  },
  busy: {
    subjectCode: "1.2",
    reasonCode: "4.4",
    meaning: "Function Provider / Busy (not now)",
    source: `${COMMON}; the reason's name is not checked here: we act on subject 1.2 whatever the reason`,
  },
  invalid: { subjectCode: "1.6", reasonCode: "2.1", meaning: "Function / Invalid", source: COMMON },
  missing: {
    subjectCode: "1.6",
    reasonCode: "2.2",
    meaning: "Function / Mandatory Element Missing",
    source: COMMON,
  },
  conditionalMissing: {
    subjectCode: "1.6",
    reasonCode: "2.3",
    meaning: "Function / Conditional Element Missing (DownloadOrder with neither iccid nor profileType)",
    source: `${COMMON}; ${SGP22} 5.3.1 (iccid or profileType is conditional)`,
  },
  iccidUnknown: {
    subjectCode: "8.2.1",
    reasonCode: "3.9",
    meaning: "Profile ICCID / Unknown",
    source: `${SGP22} 5.3.1-5.3.4 (each function's specific status codes)`,
  },
  iccidInUse: {
    subjectCode: "8.2.1",
    reasonCode: "3.3",
    meaning: "Profile ICCID / Already in use: DownloadOrder of an ICCID no longer available",
    source: `${SGP22} 5.3.1 DownloadOrder, specific status codes`,
  },
  iccidUnavailable: {
    subjectCode: "8.2.1",
    reasonCode: "3.7",
    meaning: "Profile ICCID / Unavailable: what some SM-DP+ vendors answer instead of 3.3",
    source:
      "not in SGP.22 5.3.1 for the ICCID (3.7 Unavailable is 8.2.5's, below); seen from vendors (issue #30), " +
      "so our client accepts it too and the simulator can answer it (download_taken_reason)",
  },
  invalidTransition: {
    subjectCode: "8.2.1",
    reasonCode: "3.5",
    meaning: "Profile ICCID / Invalid Transition: the profile's state does not allow the function",
    source: `${SGP22} 5.3.2 ConfirmOrder, 5.3.3 CancelOrder, 5.3.4 ReleaseProfile`,
  },
  profileTypeUnknown: {
    subjectCode: "8.2.5",
    reasonCode: "3.9",
    meaning: "Profile Type / Unknown",
    source: `${SGP22} 5.3.1 DownloadOrder`,
  },
  profileTypeExhausted: {
    subjectCode: "8.2.5",
    reasonCode: "3.7",
    meaning: "Profile Type / Unavailable: no more profile of the type",
    source: `${SGP22} 5.3.1 DownloadOrder`,
  },
  profileTypeMismatch: {
    subjectCode: "8.2.5",
    reasonCode: "3.10",
    meaning: "Profile Type / Invalid Association: the ICCID is not of the profile type given",
    source: `${COMMON} (reason 3.10); SGP.22 5.3.1 lists no code for this case, this is our simulator's choice`,
  },
  matchingIdInUse: {
    subjectCode: "8.2.6",
    reasonCode: "3.3",
    meaning: "Matching ID / Already in use",
    source: `${SGP22} 5.3.2 ConfirmOrder`,
  },
  matchingIdMismatch: {
    subjectCode: "8.2.6",
    reasonCode: "3.10",
    meaning: "Matching ID / Invalid Association: not this profile's",
    source: `${SGP22} 5.3.3 CancelOrder`,
  },
  notEligible: {
    subjectCode: "8.1",
    reasonCode: "4.2",
    meaning: "eUICC / Execution Error (HandleDownloadProgressInfo, point 1 eligibility failed)",
    source: `${SGP22} 5.3.5 passes the failed step's code through; this one is the sandbox's choice`,
  },
  confirmationRefused: {
    subjectCode: "8.2.7",
    reasonCode: "3.8",
    meaning: "Confirmation Code / Refused (HandleDownloadProgressInfo, point 2 confirmation failed)",
    source: `${SGP22} ES9+ GetBoundProfilePackage's refusal of the code (pySim es9p.py:95: 6.5.2.7), passed through by 5.3.5`,
  },
} as const satisfies Record<string, Es2Code>;

export type Es2CodeName = keyof typeof ES2PLUS_CODES;

/**
 * DownloadOrder of an ICCID that is not AVAILABLE: SGP.22 says 8.2.1/3.3; some vendors say
 * 8.2.1/3.7. For our own reserved ICCID both mean "allocated earlier" (order-profile.ts).
 */
export const DOWNLOAD_ORDER_TAKEN: readonly Es2CodeName[] = ["iccidInUse", "iccidUnavailable"];

/** The shape of each function's messages: what must be present, as pySim's es2p.py defines it. */
export type Es2Shape = {
  path: string;
  /** Request fields that must be present (besides `header`). */
  input_mandatory: readonly string[];
  /** Fields of an Executed-Success answer that must be present (besides `header`). */
  output_mandatory: readonly string[];
  /** HTTP status of the answer. */
  http_status: number;
  source: string;
};

const PYSIM = "pySim 597f1e0 pySim/esim/es2p.py";

export const ES2PLUS_SHAPES = {
  downloadOrder: {
    path: "/gsma/rsp2/es2plus/downloadOrder",
    input_mandatory: [],
    output_mandatory: ["iccid"],
    http_status: 200,
    source: `${SGP22} 5.3.1; ${PYSIM}:129-143 (DownloadOrder)`,
  },
  confirmOrder: {
    path: "/gsma/rsp2/es2plus/confirmOrder",
    input_mandatory: ["iccid", "releaseFlag"],
    output_mandatory: ["matchingId"],
    http_status: 200,
    source: `${SGP22} 5.3.2; ${PYSIM}:145-164 (ConfirmOrder)`,
  },
  cancelOrder: {
    path: "/gsma/rsp2/es2plus/cancelOrder",
    input_mandatory: ["finalProfileStatusIndicator", "iccid"],
    output_mandatory: [],
    http_status: 200,
    source: `${SGP22} 5.3.3; ${PYSIM}:166-180 (CancelOrder)`,
  },
  releaseProfile: {
    path: "/gsma/rsp2/es2plus/releaseProfile",
    input_mandatory: ["iccid"],
    output_mandatory: [],
    http_status: 200,
    source: `${SGP22} 5.3.4; ${PYSIM}:182-193 (ReleaseProfile)`,
  },
  handleDownloadProgressInfo: {
    path: "/gsma/rsp2/es2plus/handleDownloadProgressInfo",
    input_mandatory: ["iccid", "profileType", "timestamp", "notificationPointId", "notificationPointStatus"],
    output_mandatory: [],
    http_status: 204,
    source: `${SGP22} 5.3.5; ${PYSIM}:195-208 (HandleDownloadProgressInfo, expected_http_status 204)`,
  },
} as const satisfies Record<string, Es2Shape>;

/** The JSON binding's framing (SGP.22 6.5.1; pySim http_json_api.py:123-145, 397-417). */
export const ES2PLUS_FRAMING = {
  /** Sent in X-Admin-Protocol; any gsma/rsp/v2.x.y is accepted from a peer (http_json_api.py:416). */
  admin_protocol_prefix: "gsma/rsp/v2.",
  content_type_prefix: "application/json",
  execution_statuses: ["Executed-Success", "Executed-WithWarning", "Failed", "Expired"],
  /** 19 or 20 digits; a 19-digit ICCID may carry a trailing F pad (es2p.py:35-73). */
  iccid: /^(?:[0-9]{19}[Ff]?|[0-9]{20})$/,
  source: `${SGP22} 6.5.1.1-6.5.1.4; pySim 597f1e0 pySim/esim/http_json_api.py:123-145 and 397-417`,
} as const;

// The GSMA SGP.22 ES2+ JSON binding as far as we speak it (SGP.22 v2.x, section 5.3 and the JSON
// binding of chapter 6): the function paths, the request header, the response's
// functionExecutionStatus, the status codes we act on, and the ICCID's wire form.
// Both sides read it: our client (es2plus-client.ts) and the callback route (HandleDownloadProgressInfo).

export const ES2PLUS_PATHS = {
  downloadOrder: "/gsma/rsp2/es2plus/downloadOrder",
  confirmOrder: "/gsma/rsp2/es2plus/confirmOrder",
  cancelOrder: "/gsma/rsp2/es2plus/cancelOrder",
  releaseProfile: "/gsma/rsp2/es2plus/releaseProfile",
  handleDownloadProgressInfo: "/gsma/rsp2/es2plus/handleDownloadProgressInfo",
} as const;
export type Es2PlusFunction = Exclude<keyof typeof ES2PLUS_PATHS, "handleDownloadProgressInfo">;

/** The header value we send; a peer's is accepted when it starts with ADMIN_PROTOCOL_PREFIX (any 2.x.y). */
export const ADMIN_PROTOCOL = "gsma/rsp/v2.2.0";
export const ADMIN_PROTOCOL_PREFIX = "gsma/rsp/v2.";
export const CONTENT_TYPE = "application/json;charset=UTF-8";

export type ExecutionStatus = "Executed-Success" | "Executed-WithWarning" | "Failed" | "Expired";
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = [
  "Executed-Success",
  "Executed-WithWarning",
  "Failed",
  "Expired",
];

export type StatusCodeData = {
  subjectCode: string;
  reasonCode: string;
  subjectIdentifier?: string;
  message?: string;
};

export type FunctionExecutionStatus = { status: ExecutionStatus; statusCodeData?: StatusCodeData };

/**
 * The status codes (subject code / reason code, SGP.22 section 5.3) this service acts on. Written
 * by hand, and checked against the sourced table in ../protocols/es2plus.ts (same keys) by
 * test/protocols.es2plus.test.ts: a code we misread shows there, not at a partner.
 */
export const STATUS = {
  /** 1.1 Function requester / 1.1 Unknown: the SM-DP+ does not know our requester id or certificate. */
  requesterUnknown: { subjectCode: "1.1", reasonCode: "1.1" },
  /** 1.2 Function provider / 4.2 Execution error. */
  executionError: { subjectCode: "1.2", reasonCode: "4.2" },
  /** 1.2 Function provider / 4.4 Busy. */
  busy: { subjectCode: "1.2", reasonCode: "4.4" },
  /** 1.6 Function / 2.1 Invalid: a parameter's format or value. */
  invalid: { subjectCode: "1.6", reasonCode: "2.1" },
  /** 1.6 Function / 2.2 Mandatory element missing. */
  missing: { subjectCode: "1.6", reasonCode: "2.2" },
  /** 8.2.1 Profile ICCID / 3.9 Unknown. */
  iccidUnknown: { subjectCode: "8.2.1", reasonCode: "3.9" },
  /** 8.2.1 Profile ICCID / 3.3 Already in use: DownloadOrder of an ICCID no longer available (SGP.22 5.3.1). */
  iccidInUse: { subjectCode: "8.2.1", reasonCode: "3.3" },
  /** 8.2.1 Profile ICCID / 3.7 Unavailable: what some SM-DP+ vendors answer instead of 3.3. */
  iccidUnavailable: { subjectCode: "8.2.1", reasonCode: "3.7" },
  /** 8.2.1 Profile ICCID / 3.5 Invalid transition: the profile's state does not allow the function. */
  invalidTransition: { subjectCode: "8.2.1", reasonCode: "3.5" },
  /** 8.2.5 Profile Type / 3.9 Unknown. */
  profileTypeUnknown: { subjectCode: "8.2.5", reasonCode: "3.9" },
  /** 8.2.5 Profile Type / 3.7 Unavailable: no profile of that type left. */
  profileTypeExhausted: { subjectCode: "8.2.5", reasonCode: "3.7" },
  /** 8.2.6 Matching ID / 3.3 Already in use. */
  matchingIdInUse: { subjectCode: "8.2.6", reasonCode: "3.3" },
  /** 8.2.6 Matching ID / 3.10 Invalid association (not this profile's). */
  matchingIdMismatch: { subjectCode: "8.2.6", reasonCode: "3.10" },
} as const satisfies Record<string, StatusCodeData>;

export function isStatus(data: StatusCodeData | undefined, code: StatusCodeData): boolean {
  return data?.subjectCode === code.subjectCode && data?.reasonCode === code.reasonCode;
}

/**
 * The codes that say the SM-DP+ could not do it now, not that it will never: the caller's outcome
 * is unknown or retryable, never a refusal. Everything else under `Failed` is definitive.
 */
export function isRetryableFailure(data: StatusCodeData | undefined): boolean {
  if (data === undefined) return true;
  return (
    data.subjectCode === "1.1" ||
    data.subjectCode === "1.2" ||
    (data.subjectCode === "1.6" && data.reasonCode.startsWith("5."))
  );
}

/** ICCIDs travel as 19 or 20 digits, a 19-digit one possibly padded with a trailing F (SGP.22). */
export function normalizeIccid(wire: string): string | null {
  const digits = /^[0-9]{19}[Ff]$/.test(wire) ? wire.slice(0, 19) : wire;
  return /^[0-9]{19,20}$/.test(digits) ? digits : null;
}

export function describeStatus(status: FunctionExecutionStatus): string {
  const data = status.statusCodeData;
  if (!data) return status.status;
  const message = data.message ? `: ${data.message}` : "";
  return `${status.status} ${data.subjectCode}/${data.reasonCode}${message}`.slice(0, 500);
}

// A refund's stored answer (refunds/refund-order.ts answers with the bytes the API would send) as
// the console's error page, for the partner's refund form and the operator's refund on its behalf.
import { ApiError, ERROR_CODES, type ErrorCode } from "../shared/errors.ts";

/** The refusal's own code when it is one of ours (never an inherited key such as `toString`), else internal_error. */
export function refusalOf(status: number, body: string): ApiError {
  const problem = JSON.parse(body) as { code?: unknown; detail?: unknown };
  const code: ErrorCode =
    typeof problem.code === "string" && Object.hasOwn(ERROR_CODES, problem.code)
      ? (problem.code as ErrorCode)
      : "internal_error";
  const detail = typeof problem.detail === "string" ? problem.detail : `The refund answered ${status}.`;
  return new ApiError(code, detail);
}

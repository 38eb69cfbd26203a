// The refusal of a purchase, top-up or refund whose supplier this process cannot reach (its
// settings are missing: Carrier.serves is false), answered before anything is created: no order, no
// hold, no refund intent, nothing asked of anyone. Partners never see suppliers, so it names the
// network. 503: the operator's to fix, and the same request succeeds once the supplier is configured.
import { ApiError } from "../shared/errors.ts";

export function networkUnreachable(what: string, nothing: string): ApiError {
  return new ApiError(
    "carrier_unavailable",
    `The network of ${what} cannot be reached now. ${nothing} Try again later.`,
  );
}

// A webhook URL is checked when it is set (create, PATCH): the rules of send time, so a partner
// learns at once (422 invalid_webhook_url) rather than from failed deliveries, and two more on the
// URL as written (no space, no fragment), which an endpoint stored before them keeps. The check at
// send time still runs at every attempt: DNS may point elsewhere tomorrow.
import type { Config } from "../config.ts";
import { ApiError } from "../shared/errors.ts";
import { refusal } from "./send-webhook.ts";
import { checkResolves, ipLiteral } from "./target-address.ts";

function invalid(detail: string): ApiError {
  return new ApiError("invalid_webhook_url", detail, {
    errors: [{ field: "url", code: "not_allowed", message: detail }],
  });
}

export async function checkWebhookUrl(
  config: Pick<Config, "webhook_allow_private_networks">,
  raw: string,
): Promise<string> {
  // As written, not as parsed: the URL is stored and shown as the partner sent it.
  if (/\s/.test(raw)) throw invalid("The URL may not contain spaces: percent-encode them (%20).");
  if (raw.includes("#")) throw invalid("The URL may not carry a fragment (#…): a fragment is never sent.");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("The URL does not parse.");
  }
  if (url.username !== "" || url.password !== "") throw invalid("The URL may not carry credentials.");
  const allow_private = config.webhook_allow_private_networks;
  const refused = refusal(url, allow_private);
  if (refused !== null) throw invalid(`The URL is ${refused}.`);
  if (ipLiteral(url) === null) {
    try {
      await checkResolves(url.hostname, allow_private);
    } catch (error) {
      throw invalid(`The URL is refused: ${(error as Error).message}.`);
    }
  }
  return raw;
}

// The Carrier port over HTTP, speaking the protocol of the sandbox carrier simulator
// (src/carrier/simulator/README.md): POST /profiles, POST /topups, GET /outcomes/:reference and,
// for refunds, POST /profiles/cancel and POST /bundles/cancel; JSON, a bearer token.
//
// The one decision that matters is which answers are definitive. Only a 200 with a well-formed
// body is "ok", and only a 422 that says "refused" is "refused" (the caller releases the hold).
// Everything else (timeout, refused connection, 5xx, 401, a redirect, an answer too large or
// malformed) is "unavailable": the outcome is unknown and the caller asks again later with the
// same reference, which the carrier answers without provisioning twice.
import type {
  CancelOutcome,
  CancelRequest,
  Carrier,
  CarrierOutcome,
  EsimStateOutcome,
  LookedUpOutcome,
  ProvisionedProfile,
  ProvisionRequest,
  SimulatedEvent,
  TopUpRequest,
  TopUpResult,
} from "./carrier.ts";
import { parseEsimSignal } from "./esim-signal.ts";
import { isValidIccid } from "./luhn.ts";

export type HttpCarrierOptions = {
  /** e.g. http://127.0.0.1:3100; paths are appended to it. */
  base_url: string;
  api_key: string;
  /** The whole call, connection to last body byte. */
  timeout_ms: number;
};

/** A carrier answer is a few hundred bytes; a megabyte is a broken or hostile peer. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_TIMEOUT_MS = 120_000;
const MAX_REASON_LENGTH = 500;
const SMDP_ADDRESS = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/;
/** SGP.22 matching IDs: uppercase letters, digits and hyphens. */
const MATCHING_ID = /^[0-9A-Z-]{1,255}$/;

type HttpAnswer = { kind: "answer"; status: number; body: unknown } | { kind: "unavailable"; reason: string };

export class HttpCarrier implements Carrier {
  readonly #base_url: string;
  readonly #api_key: string;
  readonly #timeout_ms: number;
  /** One call per operation: its timeout. */
  readonly operation_ms: number;

  constructor(options: HttpCarrierOptions) {
    const url = new URL(options.base_url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`carrier base_url must be http or https, got ${url.protocol}`);
    }
    if (
      !Number.isInteger(options.timeout_ms) ||
      options.timeout_ms < 1 ||
      options.timeout_ms > MAX_TIMEOUT_MS
    ) {
      throw new Error(`carrier timeout_ms must be 1 to ${MAX_TIMEOUT_MS}, got ${options.timeout_ms}`);
    }
    if (options.api_key === "") throw new Error("carrier api_key must not be empty");
    this.#base_url = options.base_url.replace(/\/+$/, "");
    this.#api_key = options.api_key;
    this.#timeout_ms = options.timeout_ms;
    this.operation_ms = options.timeout_ms;
  }

  async provisionProfile(request: ProvisionRequest): Promise<CarrierOutcome<ProvisionedProfile>> {
    const answer = await this.#post("/profiles", request);
    if (answer.kind === "unavailable") return answer;
    if (answer.status !== 200) return notOk(answer.status, answer.body);
    const profile = parseProvisionedProfile(answer.body);
    if (profile === null)
      return { kind: "unavailable", reason: "carrier answered 200 with a malformed profile" };
    return { kind: "ok", value: profile };
  }

  /**
   * The bundle side of a new eSIM whose profile came from an SM-DP+ (CARRIER_PROFILES=es2plus):
   * POST /profiles naming the profile, so the bundle system attaches the plan to that ICCID.
   */
  async attachPlan(
    request: ProvisionRequest,
    profile: ProvisionedProfile,
    deadline?: AbortSignal,
  ): Promise<CarrierOutcome<ProvisionedProfile>> {
    const body = {
      ...request,
      profile: {
        iccid: profile.iccid,
        smdp_address: profile.smdp_address,
        matching_id: profile.activation_code,
      },
    };
    const answer = await this.#post("/profiles", body, deadline);
    if (answer.kind === "unavailable") return answer;
    if (answer.status !== 200) return notOk(answer.status, answer.body);
    const attached = parseProvisionedProfile(answer.body);
    if (attached?.iccid !== profile.iccid)
      return { kind: "unavailable", reason: "carrier answered 200 with another profile" };
    return { kind: "ok", value: profile };
  }

  async topUp(request: TopUpRequest): Promise<CarrierOutcome<TopUpResult>> {
    const answer = await this.#post("/topups", request);
    if (answer.kind === "unavailable") return answer;
    if (answer.status !== 200) return notOk(answer.status, answer.body);
    const result = parseTopUpResult(answer.body, request.iccid);
    if (result === null)
      return { kind: "unavailable", reason: "carrier answered 200 with a malformed top-up" };
    return { kind: "ok", value: result };
  }

  async lookUpOutcome(reference: string): Promise<LookedUpOutcome> {
    const answer = await this.#post(`/outcomes/${encodeURIComponent(reference)}`, null);
    if (answer.kind === "unavailable") return answer;
    if (answer.status === 404 && isObject(answer.body) && answer.body.error === "not_found") {
      return { kind: "not_found" };
    }
    if (answer.status !== 200) return notOk(answer.status, answer.body);
    const body = answer.body;
    const value =
      isObject(body) && body.kind === "topup" ? parseLookedUpTopUp(body) : parseProvisionedProfile(body);
    if (value === null)
      return { kind: "unavailable", reason: "carrier answered 200 with a malformed outcome" };
    return { kind: "ok", value };
  }

  /**
   * A new eSIM's order: the profile and its bundle. Idempotent by reference at the carrier.
   * `deadline`: the budget of a composed cancel (es2plus-carrier.ts) this call is the last step of.
   */
  async cancelProfile(request: CancelRequest, deadline?: AbortSignal): Promise<CancelOutcome> {
    return cancelAnswer(await this.#post("/profiles/cancel", request, deadline), request);
  }

  /** A top-up order: its queued bundle only. Idempotent by reference at the carrier. */
  async cancelBundle(request: CancelRequest): Promise<CancelOutcome> {
    return cancelAnswer(await this.#post("/bundles/cancel", request), request);
  }

  async esimState(iccid: string): Promise<EsimStateOutcome> {
    return esimAnswer(await this.#post(`/esims/${encodeURIComponent(iccid)}`, null), iccid);
  }

  async simulate(iccid: string, event: SimulatedEvent): Promise<EsimStateOutcome> {
    return esimAnswer(await this.#post(`/sandbox/esims/${encodeURIComponent(iccid)}/simulate`, event), iccid);
  }

  /**
   * One POST (a GET when `body` is null); never throws: every transport failure becomes "unavailable".
   * `deadline`: an operation's budget, which may run out before this call's own timeout.
   */
  async #post(path: string, body: object | null, deadline?: AbortSignal): Promise<HttpAnswer> {
    try {
      const response = await fetch(this.#base_url + path, {
        method: body === null ? "GET" : "POST",
        headers: {
          authorization: `Bearer ${this.#api_key}`,
          ...(body === null ? {} : { "content-type": "application/json" }),
          accept: "application/json",
        },
        body: body === null ? undefined : JSON.stringify(body),
        // A carrier that redirects is misconfigured; following it could leak the bearer token.
        redirect: "manual",
        signal: deadline
          ? AbortSignal.any([AbortSignal.timeout(this.#timeout_ms), deadline])
          : AbortSignal.timeout(this.#timeout_ms),
      });
      const text = await readLimited(response, MAX_RESPONSE_BYTES);
      if (text === null)
        return { kind: "unavailable", reason: `carrier answer exceeds ${MAX_RESPONSE_BYTES} bytes` };
      return { kind: "answer", status: response.status, body: parseJson(text) };
    } catch (error) {
      return { kind: "unavailable", reason: describeTransportError(error, this.#timeout_ms) };
    }
  }
}

function notOk(status: number, body: unknown): CarrierOutcome<never> {
  if (status === 422 && isObject(body) && body.error === "refused") {
    const reason = typeof body.reason === "string" && body.reason !== "" ? body.reason : "refused by carrier";
    return { kind: "refused", reason: reason.slice(0, MAX_REASON_LENGTH) };
  }
  if (status === 401 || status === 403) {
    return {
      kind: "unavailable",
      reason: `carrier rejected our credentials (HTTP ${status}); check CARRIER_API_KEY`,
    };
  }
  return { kind: "unavailable", reason: `carrier answered HTTP ${status}` };
}

/** Only a 200 naming the reference asked for is "ok"; a 422 refusal is "refused"; anything else is unknown. */
function cancelAnswer(answer: HttpAnswer, request: CancelRequest): CancelOutcome {
  if (answer.kind === "unavailable") return answer;
  if (answer.status !== 200) return notOk(answer.status, answer.body);
  const body = answer.body;
  if (!isObject(body) || body.reference !== request.reference || body.iccid !== request.iccid) {
    return { kind: "unavailable", reason: "carrier answered 200 with a malformed cancellation" };
  }
  return { kind: "ok" };
}

/** A signal about the ICCID asked for, 404 not_found, or unavailable (anything else). */
function esimAnswer(answer: HttpAnswer, iccid: string): EsimStateOutcome {
  if (answer.kind === "unavailable") return answer;
  if (answer.status === 404 && isObject(answer.body) && answer.body.error === "not_found") {
    return { kind: "not_found" };
  }
  if (answer.status !== 200) {
    const outcome = notOk(answer.status, answer.body);
    const reason = outcome.kind === "ok" ? "" : outcome.reason;
    return {
      kind: "unavailable",
      reason: `${outcome.kind === "refused" ? "carrier refused: " : ""}${reason}`,
    };
  }
  const signal = parseEsimSignal(answer.body);
  if (signal === null || signal.iccid !== iccid) {
    return { kind: "unavailable", reason: "carrier answered 200 with a malformed eSIM state" };
  }
  return { kind: "ok", value: signal };
}

function parseProvisionedProfile(body: unknown): ProvisionedProfile | null {
  if (!isObject(body)) return null;
  const { iccid, smdp_address, activation_code } = body;
  if (typeof iccid !== "string" || !isValidIccid(iccid)) return null;
  if (typeof smdp_address !== "string" || !SMDP_ADDRESS.test(smdp_address)) return null;
  if (typeof activation_code !== "string" || !MATCHING_ID.test(activation_code)) return null;
  return { iccid, smdp_address, activation_code };
}

/** The carrier must name the ICCID we topped up; another one means the answer is not ours. */
function parseTopUpResult(body: unknown, requested_iccid: string): TopUpResult | null {
  if (!isObject(body) || body.iccid !== requested_iccid) return null;
  return { iccid: requested_iccid };
}

function parseLookedUpTopUp(body: Record<string, unknown>): TopUpResult | null {
  return typeof body.iccid === "string" && isValidIccid(body.iccid) ? { iccid: body.iccid } : null;
}

/** The body as text, or null when it is larger than `limit_bytes` (the rest is never read). */
async function readLimited(response: Response, limit_bytes: number): Promise<string | null> {
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > limit_bytes || response.body === null) {
    await response.body?.cancel();
    return declared > limit_bytes ? null : "";
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    // Leaving the loop early cancels the stream, so the rest is never downloaded.
    if (total > limit_bytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeTransportError(error: unknown, timeout_ms: number): string {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "TimeoutError") return `carrier did not answer within ${timeout_ms} ms`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail = typeof cause?.code === "string" ? cause.code : String((error as Error)?.message ?? error);
  return `carrier unreachable: ${detail.slice(0, MAX_REASON_LENGTH)}`;
}

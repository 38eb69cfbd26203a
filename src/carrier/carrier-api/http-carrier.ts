// The Carrier port over HTTP, speaking the protocol of the sandbox carrier simulator
// (src/simulators/carrier/README.md): POST /profiles, POST /topups, GET /outcomes/:reference and,
// for refunds, POST /profiles/cancel and POST /bundles/cancel; JSON, a bearer token.
//
// The one decision that matters is which answers are definitive. Only a 200 with a well-formed
// body is "ok", and only a 422 that says "refused" is "refused" (the caller releases the hold).
// Everything else (timeout, refused connection, 5xx, 401, a redirect, an answer too large or
// malformed) is "unavailable": the outcome is unknown and the caller asks again later with the
// same reference, which the carrier answers without provisioning twice.
//
// Calls go through node:http(s) with a keep-alive agent rather than fetch: fetch cost ~200 µs of
// CPU per call here against ~80 (bench/README.md, "Session 5"), on the event loop every purchase
// shares. Neither follows redirects.
import http from "node:http";
import https from "node:https";
import { isValidIccid } from "../../lib/luhn.ts";
import { parseEsimSignal } from "../../protocols/esim-signal.ts";
import type {
  CancelOutcome,
  CancelRequest,
  CancelVerdict,
  Carrier,
  CarrierOutcome,
  EsimStateOutcome,
  LookedUpOutcome,
  PackageSupplier,
  ProvisionedProfile,
  ProvisionRequest,
  SettledCancel,
  SimulatedEvent,
  TopUpRequest,
  TopUpResult,
} from "../carrier.ts";

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
/** Sent on every call: carriers' gateways often refuse a request that names no client. */
const USER_AGENT = "esim-partner-api (carrier adapter)";
const MAX_REASON_LENGTH = 500;
const SMDP_ADDRESS = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$/;
/** SGP.22 matching IDs: uppercase letters, digits and hyphens. */
const MATCHING_ID = /^[0-9A-Z-]{1,255}$/;

/** Marks a failure on a reused keep-alive connection with no answer begun: may be asked again. */
type StaleSocket = { stale_socket?: boolean };

type HttpAnswer = { kind: "answer"; status: number; body: unknown } | { kind: "unavailable"; reason: string };

export class HttpCarrier implements Carrier {
  readonly #client: typeof http | typeof https;
  /** Keep-alive: a purchase's call reuses a connection instead of a handshake each time. */
  readonly #agent: http.Agent;
  readonly #base_url: string;
  readonly #api_key: string;
  readonly #timeout_ms: number;
  /** One call per operation: its timeout. */
  readonly operation_ms: number;

  /** An adapter serves its own supplier only. */
  serves(supplier: PackageSupplier): boolean {
    return supplier === "carrier";
  }

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
    this.#client = url.protocol === "https:" ? https : http;
    // No cap on connections (as fetch had none): a call queued for a socket would not see its
    // timeout or deadline until one freed, and the order and refund leases count on both.
    this.#agent = new this.#client.Agent({ keepAlive: true });
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

  /** Our carrier protocol's cancel is idempotent by reference and never ambiguous: nothing is held. */
  async settleHeldCancel(_request: CancelRequest, _verdict: CancelVerdict): Promise<SettledCancel> {
    return "not_held";
  }

  async esimState(iccid: string): Promise<EsimStateOutcome> {
    return esimAnswer(await this.#post(`/esims/${encodeURIComponent(iccid)}`, null), iccid);
  }

  async simulate(iccid: string, event: SimulatedEvent): Promise<EsimStateOutcome> {
    // Not idempotent (a use_data sent twice uses the data twice): never asked again.
    const path = `/sandbox/esims/${encodeURIComponent(iccid)}/simulate`;
    return esimAnswer(await this.#post(path, event, undefined, false), iccid);
  }

  /**
   * One POST (a GET when `body` is null); never throws: every transport failure becomes "unavailable".
   * `deadline`: an operation's budget, which may run out before this call's own timeout.
   */
  async #post(
    path: string,
    body: object | null,
    deadline?: AbortSignal,
    may_ask_again = true,
  ): Promise<HttpAnswer> {
    const payload = body === null ? null : JSON.stringify(body);
    const signal = deadline
      ? AbortSignal.any([AbortSignal.timeout(this.#timeout_ms), deadline])
      : AbortSignal.timeout(this.#timeout_ms);
    try {
      // A kept-alive connection the carrier closed just as it was reused fails with no answer:
      // asked again once on a new one, within the same deadline. The protocol's calls may all be
      // asked again (by reference, never provisioned twice); the carrier may have read this one.
      const { status, text } = await this.#exchange(path, payload, signal).catch((error: unknown) => {
        if (!may_ask_again || (error as StaleSocket).stale_socket !== true) throw error;
        return this.#exchange(path, payload, signal);
      });
      if (text === null)
        return { kind: "unavailable", reason: `carrier answer exceeds ${MAX_RESPONSE_BYTES} bytes` };
      return { kind: "answer", status, body: parseJson(text) };
    } catch (error) {
      return { kind: "unavailable", reason: describeTransportError(error, this.#timeout_ms) };
    }
  }

  /** One request and its answer's status and text (null: over MAX_RESPONSE_BYTES, not read further). */
  #exchange(
    path: string,
    payload: string | null,
    signal: AbortSignal,
  ): Promise<{ status: number; text: string | null }> {
    return new Promise((resolve, reject) => {
      const request = this.#client.request(
        this.#base_url + path,
        {
          method: payload === null ? "GET" : "POST",
          agent: this.#agent,
          signal,
          headers: {
            authorization: `Bearer ${this.#api_key}`,
            accept: "application/json",
            "user-agent": USER_AGENT,
            ...(payload === null
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          // Settled before the destroy: destroying emits "aborted" at once, which would reject.
          const tooLarge = () => {
            resolve({ status, text: null });
            response.destroy();
          };
          if (Number(response.headers["content-length"] ?? 0) > MAX_RESPONSE_BYTES) return tooLarge();
          const chunks: Buffer[] = [];
          let total = 0;
          response.on("data", (chunk: Buffer) => {
            total += chunk.length;
            if (total > MAX_RESPONSE_BYTES) return tooLarge();
            chunks.push(chunk);
          });
          response.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString("utf8") }));
          // Cut off mid-body (the peer, or the signal): no answer.
          response.on("error", reject);
          response.on("aborted", () => reject(new Error("carrier answer cut off")));
        },
      );
      request.on("error", (error: Error & StaleSocket & { code?: string }) => {
        // Only with no answer begun: a reset mid-answer is a failure of this call, not a stale socket.
        const answered = (request as { res?: unknown }).res != null; // set once headers arrived
        // A write to a socket the carrier had half-closed fails with EPIPE rather than a reset.
        const closed = error.code === "ECONNRESET" || error.code === "EPIPE";
        if (request.reusedSocket && closed && !answered) {
          error.stale_socket = true;
        }
        reject(error);
      });
      request.end(payload ?? undefined);
    });
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
  // node:http rejects an aborted request with an AbortError whose cause is the signal's reason.
  type Failure = { name?: unknown; code?: unknown; message?: unknown; cause?: Failure } | null;
  const failure = error as Failure;
  if (failure?.name === "TimeoutError" || failure?.cause?.name === "TimeoutError") {
    return `carrier did not answer within ${timeout_ms} ms`;
  }
  const code = typeof failure?.code === "string" && failure.code !== "ABORT_ERR" ? failure.code : null;
  const detail = code ?? String(failure?.message ?? error);
  return `carrier unreachable: ${detail.slice(0, MAX_REASON_LENGTH)}`;
}

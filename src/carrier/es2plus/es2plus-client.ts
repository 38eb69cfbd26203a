// An ES2+ client: JSON over HTTPS with mutual TLS to the SM-DP+ (SGP.22 chapter 6, JSON binding).
// Every call carries our functionRequesterIdentifier and a fresh functionCallIdentifier, and the
// answer is read in three kinds, which is all a caller decides on:
//   executed: Executed-Success or Executed-WithWarning (the function was done);
//   failed:   Failed or Expired with its status code, `retryable` when the code says "not now"
//             (busy, execution error, expired, requester unknown) and definitive otherwise;
//   unknown:  no function status at all (timeout, reset, 5xx, a redirect, a wrong X-Admin-Protocol,
//             an answer too large or not JSON): the function may or may not have been executed.
// node:https never follows redirects; a body is read to MAX_RESPONSE_BYTES at most.
import { randomUUID } from "node:crypto";
import https from "node:https";
import {
  ADMIN_PROTOCOL,
  ADMIN_PROTOCOL_PREFIX,
  CONTENT_TYPE,
  ES2PLUS_PATHS,
  type Es2PlusFunction,
  EXECUTION_STATUSES,
  type FunctionExecutionStatus,
  isRetryableFailure,
} from "./messages.ts";

export type Es2PlusClientOptions = {
  /** The SM-DP+'s ES2+ base URL, https://smdp.example:8443; the function paths are appended. */
  base_url: string;
  /** Our functionRequesterIdentifier, as the SM-DP+ operator registered it. */
  requester_id: string;
  /** PEM: our client certificate (chain), its private key, and the CA(s) we trust for the SM-DP+. */
  cert: string;
  key: string;
  ca: string;
  /** The whole call, connection to last body byte. */
  timeout_ms: number;
};

export type Es2Answer =
  | { kind: "executed"; body: Record<string, unknown>; warning: boolean }
  | { kind: "failed"; status: FunctionExecutionStatus; retryable: boolean }
  | { kind: "unknown"; reason: string };

/** An ES2+ answer is a few hundred bytes. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_TIMEOUT_MS = 120_000;
/** Connections kept to the SM-DP+ at most: a bound on what a burst of purchases opens. */
const MAX_SOCKETS = 32;

export class Es2PlusClient {
  readonly #url: URL;
  readonly #requester_id: string;
  readonly #timeout_ms: number;
  readonly #agent: https.Agent;

  constructor(options: Es2PlusClientOptions) {
    const url = new URL(options.base_url);
    if (url.protocol !== "https:") throw new Error(`ES2+ base_url must be https, got ${url.protocol}`);
    if (!/^[\x21-\x7e]{1,128}$/.test(options.requester_id)) {
      throw new Error("ES2+ requester_id must be 1 to 128 printable characters");
    }
    if (
      !Number.isInteger(options.timeout_ms) ||
      options.timeout_ms < 1 ||
      options.timeout_ms > MAX_TIMEOUT_MS
    ) {
      throw new Error(`ES2+ timeout_ms must be 1 to ${MAX_TIMEOUT_MS}, got ${options.timeout_ms}`);
    }
    this.#url = url;
    this.#requester_id = options.requester_id;
    this.#timeout_ms = options.timeout_ms;
    this.#agent = new https.Agent({
      cert: options.cert,
      key: options.key,
      ca: options.ca,
      keepAlive: true,
      maxSockets: MAX_SOCKETS,
      minVersion: "TLSv1.2",
    });
  }

  /**
   * One ES2+ function call; never throws. `deadline`: the budget of the whole operation this call
   * belongs to (es2plus-carrier.ts), which may run out before this call's own timeout.
   */
  async call(
    fn: Es2PlusFunction,
    fields: Record<string, unknown>,
    deadline?: AbortSignal,
  ): Promise<Es2Answer> {
    const body = JSON.stringify({
      header: { functionRequesterIdentifier: this.#requester_id, functionCallIdentifier: randomUUID() },
      ...fields,
    });
    const answer = await this.#post(ES2PLUS_PATHS[fn], body, deadline);
    return answer.kind === "unknown" ? answer : readAnswer(answer.status, answer.protocol, answer.text);
  }

  /**
   * Sandbox only: a call to the SM-DP+ simulator's control API (not ES2+) over the same mutual
   * TLS; the HTTP status, or 0 when nothing answered.
   */
  async sandboxControl(path: string, fields: object): Promise<number> {
    const answer = await this.#post(path, JSON.stringify(fields));
    return answer.kind === "http" ? answer.status : 0;
  }

  close(): void {
    this.#agent.destroy();
  }

  #post(
    path: string,
    body: string,
    deadline?: AbortSignal,
  ): Promise<
    { kind: "http"; status: number; protocol: string; text: string } | { kind: "unknown"; reason: string }
  > {
    return new Promise((resolve) => {
      const request = https.request(
        new URL(this.#url.pathname.replace(/\/+$/, "") + path, this.#url),
        {
          method: "POST",
          agent: this.#agent,
          headers: {
            "content-type": CONTENT_TYPE,
            accept: "application/json",
            "x-admin-protocol": ADMIN_PROTOCOL,
            "content-length": Buffer.byteLength(body),
          },
          signal: deadline
            ? AbortSignal.any([AbortSignal.timeout(this.#timeout_ms), deadline])
            : AbortSignal.timeout(this.#timeout_ms),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let total = 0;
          response.on("data", (chunk: Buffer) => {
            total += chunk.byteLength;
            if (total > MAX_RESPONSE_BYTES) {
              response.destroy();
              resolve({ kind: "unknown", reason: `SM-DP+ answer exceeds ${MAX_RESPONSE_BYTES} bytes` });
              return;
            }
            chunks.push(chunk);
          });
          response.on("end", () =>
            resolve({
              kind: "http",
              status: response.statusCode ?? 0,
              protocol: String(response.headers["x-admin-protocol"] ?? ""),
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          response.on("error", (error) => resolve({ kind: "unknown", reason: this.#describe(error) }));
        },
      );
      request.on("error", (error) =>
        resolve({
          kind: "unknown",
          reason: deadline?.aborted
            ? "the operation's time (6 × CARRIER_TIMEOUT_MS) ran out before the SM-DP+ answered"
            : this.#describe(error),
        }),
      );
      request.end(body);
    });
  }

  #describe(error: Error & { code?: string }): string {
    if (error.name === "TimeoutError" || error.name === "AbortError") {
      return `SM-DP+ did not answer within ${this.#timeout_ms} ms`;
    }
    return `SM-DP+ unreachable: ${(error.code ?? error.message).slice(0, 300)}`;
  }
}

/** The function status of one HTTP answer (SGP.22: a function's answer is HTTP 200 with a header). */
export function readAnswer(status: number, protocol: string, text: string): Es2Answer {
  if (status !== 200) return { kind: "unknown", reason: `SM-DP+ answered HTTP ${status}` };
  if (!protocol.startsWith(ADMIN_PROTOCOL_PREFIX)) {
    return { kind: "unknown", reason: `SM-DP+ answered X-Admin-Protocol "${protocol.slice(0, 40)}"` };
  }
  const body = parseObject(text);
  const execution = readExecutionStatus(body);
  if (body === null || execution === null) {
    return { kind: "unknown", reason: "SM-DP+ answered without a functionExecutionStatus" };
  }
  if (execution.status === "Executed-Success" || execution.status === "Executed-WithWarning") {
    return { kind: "executed", body, warning: execution.status === "Executed-WithWarning" };
  }
  const retryable = execution.status === "Expired" || isRetryableFailure(execution.statusCodeData);
  return { kind: "failed", status: execution, retryable };
}

function readExecutionStatus(body: Record<string, unknown> | null): FunctionExecutionStatus | null {
  const header = body?.header as { functionExecutionStatus?: unknown } | undefined;
  const execution = header?.functionExecutionStatus as Record<string, unknown> | undefined;
  if (typeof execution !== "object" || execution === null) return null;
  if (!EXECUTION_STATUSES.includes(execution.status as never)) return null;
  const data = execution.statusCodeData as Record<string, unknown> | undefined;
  if (data === undefined) return { status: execution.status as FunctionExecutionStatus["status"] };
  if (typeof data?.subjectCode !== "string" || typeof data.reasonCode !== "string") return null;
  return {
    status: execution.status as FunctionExecutionStatus["status"],
    statusCodeData: {
      subjectCode: data.subjectCode.slice(0, 16),
      reasonCode: data.reasonCode.slice(0, 16),
      ...(typeof data.message === "string" ? { message: data.message.slice(0, 300) } : {}),
    },
  };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

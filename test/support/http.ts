// The one HTTP client of the tests, the chaos, soak and fuzz engines and the benchmark: JSON in
// and out, a bearer key or any headers, a deadline on every call, never throws on a status.
// A target is a base URL (a real socket) or a built Fastify app (answered in-process with
// inject, same headers and body). Transport failures (refused connection, reset, our own
// timeout) are thrown as TransportError so a caller can tell "the process is gone" from "the
// process said no".

export type Json = Record<string, any>;
export type Answer = { status: number; body: any; headers: Headers };

/** Something that answers like Fastify's inject (a TestApp's `app`, a FuzzEnvironment's `app`). */
export type Injectable = {
  inject(options: {
    method: any;
    url: string;
    headers?: Record<string, string>;
    payload?: string;
  }): PromiseLike<{ statusCode: number; body: string; headers: Record<string, unknown> }>;
};

/** A base URL such as http://127.0.0.1:41234, or an app answering in-process. */
export type Target = string | Injectable;

export type RequestOptions = {
  /** A partner's API key, sent as `authorization: Bearer <key>`. */
  key?: string;
  /** Serialised as JSON with `content-type: application/json` unless the headers name another type. */
  body?: unknown;
  /** Sent as it is instead of `body` (malformed JSON on purpose); name its content type in the headers. */
  raw_body?: string;
  headers?: Record<string, string>;
  timeout_ms?: number;
};

export const DEFAULT_TIMEOUT_MS = 30_000;
/** How much of a body that is not JSON an answer keeps, for messages. */
const UNPARSED_CHARS = 200;

export class TransportError extends Error {
  readonly kind: "client_timeout" | "connection_error";
  constructor(kind: "client_timeout" | "connection_error", message: string) {
    super(message);
    this.name = "TransportError";
    this.kind = kind;
  }
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A JSON body, `{}` when empty, `{ unparsed }` when it is not JSON. */
export function parseBody(text: string): any {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed: text.slice(0, UNPARSED_CHARS) };
  }
}

function requestHeaders(options: RequestOptions): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (
    options.body !== undefined &&
    !Object.keys(headers).some((name) => name.toLowerCase() === "content-type")
  ) {
    headers["content-type"] = "application/json";
  }
  return headers;
}

export async function request(
  target: Target,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Answer> {
  const headers = requestHeaders(options);
  const payload = options.raw_body ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (typeof target !== "string") {
    const response = await target.inject({ method, url: path, headers, payload });
    const answered = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) answered.set(name, String(value));
    }
    return { status: response.statusCode, body: parseBody(response.body), headers: answered };
  }
  try {
    const response = await fetch(`${target}${path}`, {
      method,
      headers,
      body: payload,
      signal: AbortSignal.timeout(options.timeout_ms ?? DEFAULT_TIMEOUT_MS),
    });
    return { status: response.status, body: parseBody(await response.text()), headers: response.headers };
  } catch (error) {
    throw transportError(error, `${method} ${path}`);
  }
}

/** GET with a bearer key; the raw body bytes and status (the benchmark compares bytes). */
export async function requestBytes(
  url: string,
  path: string,
  key: string,
): Promise<{ status: number; body: Buffer }> {
  try {
    const response = await fetch(url + path, {
      headers: bearer(key),
      signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS),
    });
    return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
  } catch (error) {
    throw transportError(error, `GET ${path}`);
  }
}

/** Throws unless the answer has one of the expected statuses; returns its body. */
export function expectStatus(answer: Answer, expected: number | number[], what: string): any {
  const statuses = Array.isArray(expected) ? expected : [expected];
  if (!statuses.includes(answer.status)) {
    throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer.body;
}

function transportError(error: unknown, what: string): TransportError {
  const name = (error as { name?: string }).name;
  if (name === "TimeoutError" || name === "AbortError") {
    return new TransportError("client_timeout", `${what}: gave up waiting`);
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return new TransportError(
    "connection_error",
    `${what}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
  );
}

// A partner's OpenID provider as the service talks to it (issue 31): discovery, and every later call
// (keys, tokens, userinfo), through openid-client (a certified relying party) over our own fetch.
// That fetch holds the webhook rule on addresses (webhooks/target-address.ts): https only and public
// addresses only, checked on the address actually connected (the guarded DNS lookup), at every call,
// so an issuer whose name later points at the internal network is refused then too. With
// SSO_ALLOW_PRIVATE_NETWORKS=true (tests; refused in production) http and any address are allowed.
import http from "node:http";
import https from "node:https";
import * as oidc from "openid-client";
import { guardedLookup, ipLiteral, isPublicAddress } from "../webhooks/target-address.ts";

/** One call to the provider (connect, send, answer) gets this long. */
const CALL_TIMEOUT_MS = 10_000;
/** A discovery document, a key set or a token answer is small; past this the answer is refused. */
const MAX_ANSWER_BYTES = 256 * 1024;
const MAX_ISSUER_LENGTH = 500;

/** Why an issuer URL is refused before anything is asked of it, or null when it may be called. */
export function issuerProblem(issuer: string, allow_private: boolean): string | null {
  if (issuer.length > MAX_ISSUER_LENGTH) return `The issuer may be at most ${MAX_ISSUER_LENGTH} characters.`;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return "The issuer is not a URL.";
  }
  return (
    targetProblem(url, allow_private) ??
    (url.search !== "" || url.hash !== "" ? "The issuer may not carry a query or a fragment." : null)
  );
}

function targetProblem(url: URL, allow_private: boolean): string | null {
  if (url.protocol !== "https:" && !(allow_private && url.protocol === "http:"))
    return `The issuer must be an https URL (${url.protocol} is not called).`;
  if (url.username !== "" || url.password !== "") return "The issuer may not carry credentials.";
  const literal = ipLiteral(url);
  if (literal !== null && !allow_private && !isPublicAddress(literal))
    return `The issuer's address ${literal} is not a public address.`;
  return null;
}

function bodyOf(body: unknown): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new Error("unsupported request body for the SSO provider");
}

/** A fetch for openid-client: one request, no redirect followed, bounded in time and size. */
export function guardedFetch(allow_private: boolean): oidc.CustomFetch {
  return (raw, options) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(raw);
      const refused = targetProblem(url, allow_private);
      if (refused !== null) return reject(new Error(refused));
      const client = url.protocol === "https:" ? https : http;
      const body = bodyOf(options.body);
      const request = client.request(url, {
        method: options.method,
        headers: options.headers,
        agent: false,
        lookup: guardedLookup(allow_private) as never,
        timeout: CALL_TIMEOUT_MS,
        signal: options.signal,
      });
      const timer = setTimeout(
        () => request.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)),
        CALL_TIMEOUT_MS,
      );
      request.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.on("timeout", () => request.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
      request.on("response", (answer) => {
        const chunks: Buffer[] = [];
        let read = 0;
        answer.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES)
            request.destroy(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        answer.on("error", reject);
        answer.on("end", () => {
          clearTimeout(timer);
          const headers = new Headers();
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
          }
          const status = answer.statusCode ?? 502;
          const empty = status === 204 || status === 304 || options.method === "HEAD";
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status, headers }));
        });
      });
      request.end(body);
    });
}

export type ProviderClient = { issuer: string; client_id: string; client_secret: string };

/**
 * The provider's configuration from its discovery document (the issuer it names must be the one
 * given), for this client; throws when it cannot be read or does not agree.
 */
export async function discoverProvider(
  client: ProviderClient,
  allow_private: boolean,
): Promise<oidc.Configuration> {
  const problem = issuerProblem(client.issuer, allow_private);
  if (problem !== null) throw new Error(problem);
  const insecure = new URL(client.issuer).protocol === "http:";
  return oidc.discovery(
    new URL(client.issuer),
    client.client_id,
    client.client_secret,
    oidc.ClientSecretBasic(client.client_secret),
    {
      [oidc.customFetch]: guardedFetch(allow_private),
      timeout: CALL_TIMEOUT_MS / 1000,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    },
  );
}

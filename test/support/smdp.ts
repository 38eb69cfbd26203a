// The SM-DP+ simulator as a child process over mutual TLS (src/simulators/smdp), and a
// small client for its control API with the operator's test certificate.
import https from "node:https";
import { after } from "node:test";
import { type NodeChild, spawnNode, unref, waitForOutput } from "./processes.ts";
import type { TestCertificates } from "./tls.ts";

export const REQUESTER_ID = "esim-api-test";
export const SMDP_ADDRESS = "smdp.sandbox.test";

export type SmdpProfile = {
  iccid: string;
  profile_type: string;
  state: string;
  eid: string | null;
  matching_id: string | null;
};
export type SmdpAudit = {
  counts: Record<string, number>;
  released: { iccid: string; matching_id: string | null; state: string }[];
};

export type SmdpProcess = {
  url: string;
  child: NodeChild;
  control: (patch: Record<string, unknown>) => Promise<Record<string, unknown>>;
  load: (profile_type: string, first_iccid: string, count: number) => Promise<{ loaded: number }>;
  profile: (iccid: string) => Promise<SmdpProfile | null>;
  event: (iccid: string, event: string) => Promise<{ status: number; body: unknown }>;
  audit: () => Promise<SmdpAudit>;
  stop: () => Promise<number | null>;
};

export async function startSmdpProcess(options: {
  databaseUrl: string;
  certs: TestCertificates;
  callback_url?: string;
  callback_token?: string;
  /** Register stop() with node:test's after() (default); plain scripts pass false and stop it. */
  stopAfterTests?: boolean;
}): Promise<SmdpProcess> {
  const { certs } = options;
  const child = spawnNode({
    name: "smdp simulator",
    script: "src/simulators/smdp/main.ts",
    env: {
      DATABASE_URL: options.databaseUrl,
      SMDP_PORT: "0",
      SMDP_TLS_CERT_FILE: certs.server.cert_file,
      SMDP_TLS_KEY_FILE: certs.server.key_file,
      SMDP_TLS_CA_FILE: certs.ca_file,
      SMDP_REQUESTER_ID: REQUESTER_ID,
      SMDP_ADDRESS,
      SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
      ...(options.callback_url ? { SMDP_CALLBACK_URL: options.callback_url } : {}),
      ...(options.callback_token ? { SMDP_CALLBACK_TOKEN: options.callback_token } : {}),
    },
    keep_chars: 8_000,
  });
  const url = await waitForOutput(child, /^smdp simulator listening on (https:\/\/\S+)$/m, 15_000);
  unref(child);
  if (options.stopAfterTests !== false) after(() => child.stop(5_000));
  const send = (method: string, path: string, body?: object) => smdpRequest(url, certs, method, path, body);
  const ok = async (method: string, path: string, body?: object) => {
    const answer = await send(method, path, body);
    if (answer.status !== 200)
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body as never;
  };
  return {
    url,
    child,
    control: (patch) => ok("POST", "/control", patch),
    load: (profile_type, first_iccid, count) =>
      ok("POST", "/sandbox/profiles", { profile_type, first_iccid, count }),
    profile: async (iccid) => {
      const answer = await send("GET", `/sandbox/profiles/${iccid}`);
      return answer.status === 404 ? null : (answer.body as SmdpProfile);
    },
    event: (iccid, event) => send("POST", `/sandbox/profiles/${iccid}/events`, { event }),
    audit: () => ok("GET", "/audit"),
    stop: () => child.stop(5_000),
  };
}

/** One HTTPS request with a client certificate (the operator's unless told otherwise). */
export function smdpRequest(
  url: string,
  certs: TestCertificates,
  method: string,
  path: string,
  body?: object,
  identity: { cert: string; key: string } | null = certs.client,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const request = https.request(
      new URL(path, url),
      {
        method,
        ca: certs.ca,
        ...(identity ?? {}),
        agent: false,
        headers: { ...(text ? { "content-type": "application/json" } : {}), ...headers },
        timeout: 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = raw;
          try {
            parsed = JSON.parse(raw);
          } catch {}
          resolve({ status: response.statusCode ?? 0, body: parsed, headers: response.headers });
        });
      },
    );
    request.on("error", reject);
    request.end(text);
  });
}

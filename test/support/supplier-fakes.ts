// The two wholesale suppliers' fakes (src/simulators/airalo, src/simulators/esimgo) as child
// processes of a cluster, on ports of their own: the API processes are pointed at them with
// AIRALO_API_URL / ESIMGO_API_URL and credentials, as an operator points a deployment at a
// supplier's test mode. Unlike the in-process fakes the sandbox starts on first use, their faults
// (in memory, per fake process) are reachable from the driver through each fake's control API, and
// the fakes can be killed like the carrier. Their records live in the database's airalo_sim and
// esimgo_sim schemas, which the audit reads (test/support/audit/suppliers.ts).
import { randomBytes } from "node:crypto";
import { type EsimGoProcess, startEsimGoProcess } from "./esimgo-simulator.ts";
import { type NodeChild, spawnNode, unref, waitForOutput } from "./processes.ts";

export type SupplierFake = {
  /** e.g. http://127.0.0.1:41234 (control routes; the API is under /v2 or /v2.4). */
  url: string;
  /** POST to the fake's control API (Airalo: /control…, eSIM Go: /sandbox/…); throws unless 2xx. */
  control: (path: string, body: unknown) => Promise<unknown>;
  stop: () => Promise<number | null>;
  kill: () => Promise<number | null>;
};

export type SupplierFakes = {
  airalo: SupplierFake;
  esimgo: SupplierFake;
  /** What the API processes need to reach both (URLs and credentials). */
  env: Record<string, string>;
  stop: () => Promise<void>;
};

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
const CONTROL_TIMEOUT_MS = 10_000;
const AIRALO_LISTENING = /^airalo fake listening on (http:\/\/\S+)$/m;
/** Far more than a run spends: running out of supplier credit is not what chaos tests. */
const AIRALO_CREDIT_USD = "10000000";
const ESIMGO_BALANCE = "10000000.00";

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${url}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return text === "" ? null : JSON.parse(text);
}

async function startAiraloProcess(
  databaseUrl: string,
): Promise<{ fake: SupplierFake; env: Record<string, string> }> {
  const client_id = `chaos-airalo-${randomBytes(6).toString("hex")}`;
  const client_secret = `chaos-airalo-secret-${randomBytes(12).toString("hex")}`;
  const running: NodeChild = spawnNode({
    name: "airalo fake",
    script: "src/simulators/airalo/main.ts",
    env: {
      DATABASE_URL: databaseUrl,
      AIRALO_SIM_PORT: "0",
      AIRALO_SIM_HOST: "127.0.0.1",
      AIRALO_SIM_CLIENT_ID: client_id,
      AIRALO_SIM_CLIENT_SECRET: client_secret,
      AIRALO_SIM_CREDIT_USD: AIRALO_CREDIT_USD,
      SIMULATOR_EXIT_ON_STDIN_CLOSE: "1",
    },
    keep_chars: 8_000,
  });
  const url = await waitForOutput(running, AIRALO_LISTENING, START_TIMEOUT_MS);
  unref(running);
  const fake: SupplierFake = {
    url,
    control: (path, body) => post(`${url}${path}`, { authorization: `Bearer ${client_secret}` }, body),
    stop: () => running.stop(STOP_GRACE_MS),
    kill: running.kill,
  };
  const env = {
    AIRALO_API_URL: `${url}/v2`,
    AIRALO_CLIENT_ID: client_id,
    AIRALO_CLIENT_SECRET: client_secret,
  };
  return { fake, env };
}

function esimGoFake(process_: EsimGoProcess): SupplierFake {
  return {
    url: process_.url,
    control: (path, body) => post(`${process_.url}${path}`, { "x-api-key": process_.apiKey }, body),
    stop: process_.stop,
    kill: process_.kill,
  };
}

/**
 * Starts both fakes on `databaseUrl`. eSIM Go's refunds are enabled (the account setting eSIM Go
 * leaves off by default) so a chaos refund of an unused bundle can complete; both accounts get
 * credit far beyond a run's spend. The documented rate limits stay as they are.
 */
export async function startSupplierFakes(databaseUrl: string): Promise<SupplierFakes> {
  const airalo = await startAiraloProcess(databaseUrl);
  let esimgo: EsimGoProcess;
  try {
    esimgo = await startEsimGoProcess({
      databaseUrl,
      env: { ESIMGO_SIM_BALANCE: ESIMGO_BALANCE, ESIMGO_SIM_REFUNDS_ENABLED: "1" },
    });
  } catch (error) {
    await airalo.fake.stop();
    throw error;
  }
  const fakes: SupplierFakes = {
    airalo: airalo.fake,
    esimgo: esimGoFake(esimgo),
    env: {
      ...airalo.env,
      ESIMGO_API_URL: esimgo.base,
      ESIMGO_API_KEY: esimgo.apiKey,
    },
    stop: async () => {
      await Promise.allSettled([airalo.fake.stop(), esimgo.stop()]);
    },
  };
  // The organisation row is created at the first start only: on a database that had one, say so again.
  await fakes.esimgo.control("/sandbox/organisation", { balance: 10_000_000, refundsEnabled: true });
  await fakes.airalo.control("/control/account", { credit_usd: Number(AIRALO_CREDIT_USD) });
  return fakes;
}

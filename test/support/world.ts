// A whole sandbox for end-to-end tests: a fresh database, the carrier simulator process, a real
// SMTP server and one or more real service processes, with small helpers that speak HTTP.
import assert from "node:assert/strict";
import { after } from "node:test";
import type { Carrier } from "../../src/carrier/carrier.ts";
import { HttpCarrier } from "../../src/carrier/carrier-api/http-carrier.ts";
import { loadConfig } from "../../src/config.ts";
import { createKysely } from "../../src/db/pool.ts";
import type { Database } from "../../src/db/schema.ts";
import type { AppContext } from "../../src/shared/context.ts";
import { KeyedSlots } from "../../src/shared/keyed-slots.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { balance, createCart, createPartner, END_USER, PACKAGE_ID, submitCart } from "./fixtures.ts";
import { type Answer, type Json, type RequestOptions, request } from "./http.ts";
import { type ServiceProcess, startServiceProcess } from "./service.ts";
import { type SimulatorProcess, startSimulatorProcess } from "./simulator.ts";
import { startSmtpServer, type TestSmtpServer } from "./smtp.ts";

export const ADMIN_TOKEN = "world-admin-token-0123456789";

export type World = {
  database: TestDatabase;
  simulator: SimulatorProcess;
  smtp: TestSmtpServer;
  services: ServiceProcess[];
  env: Record<string, string>;
  startService: (extra?: Record<string, string>) => Promise<ServiceProcess>;
};

/** A new partner credited `credit_minor` that bought one eSIM of fr-1gb-7d: the answer, its order and ICCID. */
export async function buyEsim(
  url: string,
  credit_minor: number,
): Promise<{
  partner: { partner_id: string; api_key: string };
  bought: Answer;
  order_id: string;
  iccid: string;
}> {
  const partner = await newPartner(url, credit_minor);
  const bought = await submit(
    url,
    partner.api_key,
    (await newCart(url, partner.api_key, "fr-1gb-7d")).cart_key,
  );
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  return {
    partner,
    bought,
    order_id: bought.body.orderID as string,
    iccid: bought.body.purchases[0].iccid as string,
  };
}

/** The world's simulator as the service's carrier adapter, with a short timeout. */
export function worldCarrier(world: World): HttpCarrier {
  return new HttpCarrier({
    base_url: world.simulator.url,
    api_key: world.simulator.apiKey,
    timeout_ms: 1_500,
  });
}

/**
 * The test process as one more worker of the world's service (a sweep, an operator's command): its
 * context over the world's database, asking `carrier` (the world's simulator unless given).
 */
export function workerContext(world: World, carrier: Carrier = worldCarrier(world)): AppContext {
  return {
    config: { ...loadConfig({}), carrier_timeout_ms: 1_500 },
    pool: world.database.pool,
    db: createKysely<Database>(world.database.pool),
    carrier,
    csv_exports: new KeyedSlots(1, 1),
  };
}

export async function createWorld(
  options: { services?: number; env?: Record<string, string> } = {},
): Promise<World> {
  const database = await createTestDatabase({ catalog: true });
  const simulator = await startSimulatorProcess({
    databaseUrl: database.url,
    env: { SIMULATOR_SLOW_MS: "4000" },
  });
  const smtp = await startSmtpServer();
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    CARRIER_URL: simulator.url,
    CARRIER_API_KEY: simulator.apiKey,
    SMTP_URL: smtp.url,
    ADMIN_TOKEN,
    CARRIER_TIMEOUT_MS: "1500",
    RESOLVE_AFTER_MS: "2500",
    // A job locked by a SIGKILLed process is unlocked after this long (tests kill processes).
    STALE_JOB_AFTER_MS: "4000",
    RATE_LIMIT_PER_SECOND: "100000",
    RATE_LIMIT_BURST: "100000",
    AUTH_FAILURES_PER_MINUTE: "100000",
    ...options.env,
  };
  const services: ServiceProcess[] = [];
  const startService = async (extra: Record<string, string> = {}) => {
    const service = await startServiceProcess({ ...env, ...extra });
    services.push(service);
    return service;
  };
  for (let i = 0; i < (options.services ?? 1); i++) await startService();
  after(async () => {
    for (const service of services) await service.stop();
    await simulator.stop();
    await smtp.close();
  });
  return { database, simulator, smtp, services, env, startService };
}

export type { Answer, Json };
export { END_USER };

/** One HTTP call to a service process (test/support/http.ts). */
export function call(
  url: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Answer> {
  return request(url, method, path, options);
}

export function newPartner(
  url: string,
  credit_minor: number,
  name = "Acme Travel",
): Promise<{ partner_id: string; api_key: string }> {
  return createPartner(url, { admin_token: ADMIN_TOKEN, name, credit_minor });
}

export function newCart(
  url: string,
  key: string,
  package_id = PACKAGE_ID,
  start_date?: string,
): Promise<Json> {
  return createCart(url, key, package_id, start_date);
}

export function submit(url: string, key: string, cart_key: string, overrides: Json = {}): Promise<Answer> {
  return submitCart(url, key, cart_key, overrides);
}

export { balance };

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeout_ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

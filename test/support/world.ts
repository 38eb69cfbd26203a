// A whole sandbox for end-to-end tests: a fresh database, the carrier simulator process, a real
// SMTP server and one or more real service processes, with small helpers that speak HTTP.
import { after } from "node:test";
import { createTestDatabase, type TestDatabase } from "./db.ts";
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

export type Json = Record<string, any>;
export type Answer = { status: number; body: Json; headers: Headers };

export async function call(
  url: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

export async function newPartner(
  url: string,
  credit_minor: number,
  name = "Acme Travel",
): Promise<{ partner_id: string; api_key: string }> {
  const created = await call(url, "POST", "/admin/partners", {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { name },
  });
  if (created.status !== 201) throw new Error(`partner: ${created.status} ${JSON.stringify(created.body)}`);
  if (credit_minor > 0) {
    const credited = await call(url, "POST", `/admin/partners/${created.body.partner_id}/wallet/credits`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { amount_minor: credit_minor, reference: `seed-${created.body.partner_id}` },
    });
    if (credited.status !== 201) throw new Error(`credit: ${credited.status}`);
  }
  return { partner_id: created.body.partner_id, api_key: created.body.api_key };
}

export const END_USER = {
  email: "ana@example.com",
  phone: "+14155550123",
  first_name: "Ana",
  last_name: "Lima",
};

export async function newCart(
  url: string,
  key: string,
  package_id = "fr-1gb-7d",
  start_date?: string,
): Promise<Json> {
  const cart = await call(url, "POST", "/v1/orders/cart", {
    key,
    body: { package_id, ...(start_date ? { start_date } : {}) },
  });
  if (cart.status !== 201) throw new Error(`cart: ${cart.status} ${JSON.stringify(cart.body)}`);
  return cart.body;
}

export function submit(url: string, key: string, cart_key: string, overrides: Json = {}): Promise<Answer> {
  return call(url, "POST", "/v1/orders/submit", { key, body: { cart_key, ...END_USER, ...overrides } });
}

export async function balance(url: string, key: string): Promise<number> {
  return (await call(url, "GET", "/v1/profile/wallet", { key })).body.balance.amount_minor;
}

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

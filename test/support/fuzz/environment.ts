// The environment: the real app on a real port, the carrier simulator, a migrated database.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { HttpCarrier } from "../../../src/carrier/carrier-api/http-carrier.ts";
import { type Config, loadConfig } from "../../../src/config.ts";
import { createKysely } from "../../../src/db/pool.ts";
import type { Database } from "../../../src/db/schema.ts";
import { ensureOperatorAccounts } from "../../../src/ledger/accounts.ts";
import { type BuildOptions, buildApp } from "../../../src/server/app.ts";
import type { AppContext } from "../../../src/shared/context.ts";
import { KeyedSlots } from "../../../src/shared/keyed-slots.ts";
import { startSimulator } from "../../../src/simulators/carrier/server.ts";
import { callJson, prepareFixtures } from "./fixtures.ts";
import { FUZZ_ADMIN_TOKEN } from "./limits.ts";
import { operationsOf } from "./openapi.ts";
import { emptyHoldings, type Fixtures, type FuzzEnvironment } from "./state.ts";

export async function startFuzzEnvironment(
  database: { url: string; pool: pg.Pool },
  options: { config?: Partial<Config>; build?: BuildOptions } = {},
): Promise<FuzzEnvironment> {
  const simulatorKey = `sim_${randomBytes(16).toString("hex")}`;
  const simulator = await startSimulator({
    pool: database.pool,
    port: 0,
    host: "127.0.0.1",
    apiKey: simulatorKey,
    latency_ms: 0,
    slow_ms: 3_000,
  });
  const config: Config = {
    ...loadConfig({}),
    log_level: "silent",
    admin_token: FUZZ_ADMIN_TOKEN,
    database_url: database.url,
    rate_limit_per_second: 1_000_000,
    rate_limit_burst: 1_000_000,
    auth_failures_per_minute: 1_000_000,
    carrier_timeout_ms: 2_000,
    // main.ts always has one (given, or the sandbox's own); an app built here must be given one.
    webhook_secret_key: Buffer.alloc(32, 3).toString("base64"),
    // Valid requests create endpoints on loopback (nothing is sent: no delivery loop runs here).
    webhook_allow_private_networks: true,
    ...options.config,
  };
  const db = createKysely<Database>(database.pool);
  await ensureOperatorAccounts(db, config.currency);
  const carrier = new HttpCarrier({
    base_url: simulator.url,
    api_key: simulatorKey,
    timeout_ms: config.carrier_timeout_ms,
  });
  const csv_exports = new KeyedSlots(config.csv_exports_per_process, config.csv_exports_per_partner);
  const ctx: AppContext = { config, pool: database.pool, db, carrier, csv_exports };
  const { app } = await buildApp(ctx, options.build);
  const env = {
    app,
    db,
    pool: database.pool,
    url: "",
    port: 0,
    doc: null,
    operations: [],
    fixtures: null as unknown as Fixtures,
    pools: {
      holdings: { main: emptyHoldings(), other: emptyHoldings(), poor: emptyHoldings() },
      topup_choices: [],
      idempotency_keys: [],
      credit_references: [],
      etags: new Map(),
      revocable_key_ids: [],
      revoked_key_ids: [],
      partner_ids: [],
      pending_orders: [],
      sent: [],
    },
    lastRoute: null,
    close: async () => {
      await app.close();
      await simulator.close();
    },
  } as FuzzEnvironment;
  // Which route Fastify matched: the truth the checker needs for odd paths (`..`, %2F, HEAD).
  app.addHook("onSend", async (request) => {
    env.lastRoute = { method: request.method, url: request.routeOptions.url ?? null };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  env.port = typeof address === "object" && address ? address.port : 0;
  env.url = `http://127.0.0.1:${env.port}`;
  env.doc = await callJson(env, "GET", "/openapi.json");
  env.operations = operationsOf(env.doc);
  await prepareFixtures(env, config.admin_token!);
  return env;
}

// A real application over a real database for HTTP tests (fastify.inject or a listening port).
import { after } from "node:test";
import { Kysely, PostgresDialect } from "kysely";
import type { Carrier } from "../../src/carrier/carrier.ts";
import { HttpCarrier } from "../../src/carrier/carrier-api/http-carrier.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/schema.ts";
import { ensureOperatorAccounts } from "../../src/ledger/accounts.ts";
import { type BuildOptions, type BuiltApp, buildApp } from "../../src/server/app.ts";
import type { AppContext } from "../../src/shared/context.ts";
import { KeyedSlots } from "../../src/shared/keyed-slots.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { createPartner as createPartnerFixture } from "./fixtures.ts";
import { bearer } from "./http.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

export type TestApp = BuiltApp & {
  ctx: AppContext;
  db: Kysely<Database>;
  database: TestDatabase;
  /** POST /admin/partners, optionally credited: returns the partner and its key. */
  createPartner(
    name?: string,
    credit_minor?: number,
  ): Promise<{ partner_id: string; api_key: string; key_id: string }>;
  /** Headers for a partner call. */
  auth(api_key: string): Record<string, string>;
};

export async function createTestApp(
  overrides: Partial<Config> = {},
  options: BuildOptions & {
    carrier?: Carrier;
    database?: TestDatabase;
    /** Sees the SQL of every query the app runs through Kysely: tests count what a request costs. */
    onQuery?: (sql: string) => void;
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase({ catalog: true }));
  const config: Config = {
    ...loadConfig({}),
    log_level: "silent",
    admin_token: ADMIN_TOKEN,
    database_url: database.url,
    rate_limit_per_second: 100_000,
    rate_limit_burst: 100_000,
    auth_failures_per_minute: 100_000,
    webhook_secret_key: Buffer.alloc(32, 1).toString("base64"),
    ...overrides,
  };
  const onQuery = options.onQuery;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: database.pool }),
    ...(onQuery ? { log: (event) => onQuery(event.query.sql) } : {}),
  });
  await ensureOperatorAccounts(db, config.currency);
  // Tests that never reach the carrier still get the real adapter, pointed at a closed port.
  const carrier =
    options.carrier ??
    new HttpCarrier({ base_url: "http://127.0.0.1:9", api_key: "unused", timeout_ms: 500 });
  const csv_exports = new KeyedSlots(config.csv_exports_per_process, config.csv_exports_per_partner);
  const ctx: AppContext = { config, pool: database.pool, db, carrier, csv_exports };
  const built = await buildApp(ctx, options);
  await built.app.ready();
  after(() => built.app.close());

  const auth = bearer;
  const createPartner = (name = "Acme Travel", credit_minor = 0) =>
    createPartnerFixture(built.app, {
      admin_token: config.admin_token!,
      name,
      credit_minor,
      reference: (partner_id) => `initial-${partner_id}`,
    });
  return { ...built, ctx, db, database, createPartner, auth };
}

// Behind PgBouncer in transaction mode (issue 37, item 3): two service processes whose DATABASE_URL
// is a real PgBouncer (Debian's package, pool_mode = transaction, three server connections for
// everything they do) and whose DATABASE_DIRECT_URL is the database itself. Over real HTTP: a
// purchase, a top-up, a webhook to a real receiver, and cache invalidations (a revoked key, a price
// change) made through one process and heard by the other. The database's default zone is far from
// UTC and its sessions' limits are its own settings, as an operator's role would carry them.
// Through the pooler a LISTEN hears nothing, named prepared statements land on connections that
// lack them, and `options`/`statement_timeout` startup parameters are refused: each breaks one of
// these tests when the service does not route around it.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import { createPool } from "../src/db/pool.ts";
import { auditSystem, formatAudit } from "./support/audit.ts";
import { runCli } from "./support/cli.ts";
import { createTestDatabase } from "./support/db.ts";
import { createPartner, END_USER } from "./support/fixtures.ts";
import { startPgBouncer } from "./support/pgbouncer.ts";
import { startServiceProcess } from "./support/service.ts";
import { startSimulatorProcess } from "./support/simulator.ts";
import { startSmtpServer } from "./support/smtp.ts";
import { startWebhookReceiver } from "./support/webhook-receiver.ts";
import { ADMIN_TOKEN, call, type Json, newCart, newPartner, submit, waitFor } from "./support/world.ts";

// A zone far from UTC: the database's default, which the service's sessions must not take.
const ZONE = "Pacific/Kiritimati";
const TOPUP = { package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D" };

const database = await createTestDatabase({ catalog: true });
const database_name = new URL(database.url).pathname.slice(1);
await alterDatabase(database.url, {
  timezone: ZONE,
  statement_timeout: "15s",
  idle_in_transaction_session_timeout: "30s",
});
const bouncer = await startPgBouncer({ server_url: database.url, pool_size: 3 });
after(() => bouncer.stop());
const simulator = await startSimulatorProcess({ databaseUrl: database.url, stopAfterTests: true });
const smtp = await startSmtpServer();
after(() => smtp.close());
const receiver = await startWebhookReceiver();
const env = {
  DATABASE_URL: bouncer.url,
  DATABASE_DIRECT_URL: database.url,
  CARRIER_URL: simulator.url,
  CARRIER_API_KEY: simulator.apiKey,
  SMTP_URL: smtp.url,
  ADMIN_TOKEN,
  RATE_LIMIT_PER_SECOND: "100000",
  RATE_LIMIT_BURST: "100000",
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
  USAGE_SYNC_MAX_PER_SECOND: "0",
};
const services = [await startServiceProcess(env), await startServiceProcess(env)];
after(async () => {
  for (const service of services) await service.stop();
});
const [api1, api2] = services.map((service) => service.url) as [string, string];

/** ALTER DATABASE ... SET, through a direct connection, before any session of the service starts. */
async function alterDatabase(url: string, settings: Record<string, string>): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const name = pg.escapeIdentifier(new URL(url).pathname.slice(1));
    for (const [setting, value] of Object.entries(settings)) {
      await admin.query(`alter database ${name} set ${setting} = ${pg.escapeLiteral(value)}`);
    }
  } finally {
    await admin.end();
  }
}

function utcDay(offset: number): string {
  const date = new Date();
  date.setUTCDate(date.getUTCDate() + offset);
  return date.toISOString().slice(0, 10);
}

/** esim_invalidation_notices_total of `channel` on a process's /metrics. */
async function notices(url: string, channel: string): Promise<number> {
  const response = await fetch(`${url}/metrics`);
  const text = await response.text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`esim_invalidation_notices_total{channel="${channel}"}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

async function frPrice(url: string, key: string): Promise<number> {
  const answer = await call(url, "GET", "/v1/esim/destination/FR/packages", { key });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.data.find((p: Json) => p.package_id === "fr-1gb-7d").wholesale_price.amount_minor;
}

const buyer = await newPartner(api1, 100_00, "Pooled Travel");
const endpoint = await call(api1, "POST", "/v1/webhook-endpoints", {
  key: buyer.api_key,
  body: { url: receiver.path("pooled"), description: "behind PgBouncer" },
});
assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
receiver.setSecrets("pooled", [endpoint.body.secret]);

test(`every session of the service's pool speaks UTC through PgBouncer, beside sessions in ${ZONE} on the same server connections`, async () => {
  // The pool as the service opens it behind a pooler, and plain clients that keep the database's
  // zone: PgBouncer lends the same three server connections to all of them, turn by turn.
  const pooled = createPool(bouncer.url, 6, "esim-test-pooled", {
    prepare_threshold: 0,
    through_pooler: true,
  });
  const zones = async (query: () => Promise<{ rows: { zone: string }[] }>) => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) seen.add((await query()).rows[0]!.zone);
    return [...seen];
  };
  const plain = Array.from({ length: 3 }, () => new pg.Client({ connectionString: bouncer.url }));
  try {
    await Promise.all(plain.map((client) => client.connect()));
    const ZONE_SQL = "select current_setting('TimeZone') as zone";
    const [ours, ...theirs] = await Promise.all([
      Promise.all(Array.from({ length: 6 }, () => zones(() => pooled.query(ZONE_SQL)))),
      ...plain.map((client) => zones(() => client.query(ZONE_SQL))),
    ]);
    assert.deepEqual([...new Set(ours!.flat())], ["UTC"]);
    for (const seen of theirs) assert.deepEqual(seen, [ZONE], "the others keep the database's zone");
  } finally {
    await Promise.all(plain.map((client) => client.end()));
    await pooled.end();
  }
});

test("a purchase through one process and its top-up through the other, each charged once", async () => {
  const cart = await newCart(api1, buyer.api_key, "fr-1gb-7d", utcDay(0));
  const bought = await submit(api1, buyer.api_key, cart.cart_key);
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  assert.equal(bought.body.status, "completed");
  assert.equal(bought.body.purchases[0].start_date, utcDay(0));
  const iccid = bought.body.purchases[0].iccid as string;

  const topped = await call(api2, "POST", "/v1/orders/submit-topup", {
    key: buyer.api_key,
    headers: { "idempotency-key": crypto.randomUUID() },
    body: { iccid, ...TOPUP, ...END_USER },
  });
  assert.equal(topped.status, 200, JSON.stringify(topped.body));
  assert.equal(topped.body.status, "completed");
  const wallet = await call(api2, "GET", "/v1/profile/wallet", { key: buyer.api_key });
  assert.equal(
    wallet.body.balance.amount_minor,
    100_00 - bought.body.total.amount_minor - topped.body.total.amount_minor,
  );
  assert.equal((await simulator.audit()).topups.filter((t) => t.reference === topped.body.orderID).length, 1);
});

test("the purchase's webhook reaches a real receiver, signed, delivered by a worker behind the pooler", async () => {
  const completed = await waitFor("order.completed at the receiver", async () => {
    const found = receiver.succeeded("pooled").filter((r) => r.event.type === "order.completed");
    return found.length > 0 ? found : null;
  });
  for (const delivery of completed) assert.deepEqual(delivery.verified_with, [0]);
});

test("a key revoked through one process is refused by the other as soon as its notice arrives", async () => {
  const partner = await createPartner(api1, { admin_token: ADMIN_TOKEN, name: "Revoked Travel" });
  const warm = await call(api2, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(warm.status, 200, "process 2 has the key cached");
  const heard = await notices(api2, "api_key_revoked");
  const revoked = await call(api1, "DELETE", `/admin/api-keys/${partner.key_id}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(revoked.status, 204);
  // Process 2's LISTEN (on the direct connection) hears it; through the pooler it never would.
  await waitFor(
    "process 2 hears the revocation",
    async () => (await notices(api2, "api_key_revoked")) > heard,
  );
  const refused = await call(api2, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(refused.status, 401, "refused at once, before the cached entry's TTL");
});

test("a price change through one process is what the other serves once its notice arrives", async () => {
  const priced = await newPartner(api1, 0, "Priced Travel");
  const list = await frPrice(api2, priced.api_key);
  const heard = await notices(api2, "catalog_changed");
  const set = await call(api1, "PUT", `/admin/partners/${priced.partner_id}/pricing`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { discount_percent: 20, overrides: [] },
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  await waitFor(
    "process 2 hears the catalog change",
    async () => (await notices(api2, "catalog_changed")) > heard,
  );
  assert.equal(await frPrice(api2, priced.api_key), Math.floor((list * 80 + 50) / 100));
});

test("the operator's CLI through PgBouncer: a key it revokes is refused by both processes once they hear it", async () => {
  const partner = await createPartner(api1, { admin_token: ADMIN_TOKEN, name: "CLI Travel" });
  const heard = await Promise.all(services.map((service) => notices(service.url, "api_key_revoked")));
  const run = await runCli(["keys", "revoke", partner.key_id], {
    DATABASE_URL: bouncer.url,
    DATABASE_DIRECT_URL: database.url,
  });
  assert.equal(run.code, 0, run.stderr);
  for (const [index, service] of services.entries()) {
    const before = heard[index]!;
    await waitFor(
      `process ${index + 1} hears it`,
      async () => (await notices(service.url, "api_key_revoked")) > before,
    );
    const refused = await call(service.url, "GET", "/v1/profile/wallet", { key: partner.api_key });
    assert.equal(refused.status, 401);
  }
});

test("everything went through PgBouncer, and the books balance", async () => {
  assert.ok((await bouncer.transactions(database_name)) > 0, `${bouncer.version} carried the transactions`);
  await waitFor("every confirmation email sent", async () => smtp.messages.length >= 1);
  const audit = await auditSystem({ pool: database.pool, simulator, smtp });
  assert.deepEqual(audit.breaches, [], formatAudit(audit));
  assert.equal(audit.figures.esim_completed, 1);
  assert.equal(audit.figures.topup_completed, 1);
  for (const service of services) assert.doesNotMatch(service.logs(), /"level":50/, "no error logged");
});

test("through a pooler, start-up is refused when the database's sessions have no statement_timeout", async () => {
  const bare = await createTestDatabase({ catalog: true });
  const url = new URL(bouncer.url);
  url.pathname = new URL(bare.url).pathname;
  const refused = await startServiceProcess({
    ...env,
    DATABASE_URL: url.toString(),
    DATABASE_DIRECT_URL: bare.url,
  }).then(
    () => null,
    (error: Error) => error.message,
  );
  assert.ok(refused !== null, "the service did not start");
  assert.match(refused, /statement_timeout is off/);
  assert.match(refused, /idle_in_transaction_session_timeout is off/);
});

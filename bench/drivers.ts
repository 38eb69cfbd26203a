// The purchase's statements through two drivers, for issue 37 item 7: our pg layer (src/db/pool.ts:
// prepared after 3 runs, BEGIN held for the first statement, writes deferred to the next one) against
// postgres.js (the `postgres` package: every tagged statement prepared, queries issued together
// pipelined into one write). Not a dependency of the project: install it where you like and name it,
//   npm install --prefix /tmp/pgjs postgres@3.4.9
//   POSTGRES_JS=/tmp/pgjs/node_modules/postgres/src/index.js node bench/drivers.ts --clients 8,32 --duration 10
// Prints purchases/s and CPU per purchase (this process, i.e. the driver; PostgreSQL) for each
// driver and client count, the runs alternating so the machine's drift falls on both.
import { parseArgs } from "node:util";
import { createPool, deferWrite, inTransaction, type Pool } from "../src/db/pool.ts";
import { startOwnPostgres } from "../test/support/postgres.ts";
import { clusterTicks, machineBusyTicks, selfTicks, TICKS_PER_S } from "./support/proc.ts";

type Sql = {
  (strings: TemplateStringsArray, ...values: unknown[]): Promise<Record<string, unknown>[]>;
  unsafe(text: string): Promise<unknown>;
  begin<T>(work: (sql: Sql) => Promise<T>): Promise<T>;
  reserve(): Promise<Sql & { release(): void }>;
  end(): Promise<void>;
};

/** Wallets (one per client) and carts; a purchase is 2 transactions, 9 statements, as the service's. */
const SCHEMA = `
  create table carts (cart_key text primary key, partner_id text not null, total_minor bigint not null,
                      created_at timestamptz not null default now());
  create table orders (order_id text primary key, partner_id text not null, cart_key text not null,
                       status text not null check (status in ('pending', 'completed', 'failed')),
                       total_minor bigint not null, iccid text, lease_until timestamptz, resolved_at timestamptz);
  create table accounts (account_id text primary key, pending_debits_minor bigint not null default 0,
                         posted_debits_minor bigint not null default 0, posted_credits_minor bigint not null);
  create table transfers (transfer_id text primary key, debit_account_id text not null references accounts,
                          amount_minor bigint not null, state text not null, reference text not null,
                          resolved_at timestamptz);
  create index on transfers (reference);
  create table events (event_id bigserial primary key, partner_id text not null, payload jsonb not null);`;

const SQL = {
  lockCart: "select cart_key, total_minor from carts where cart_key = $1 and partner_id = $2 for update",
  insertOrder:
    "insert into orders (order_id, partner_id, cart_key, status, total_minor, lease_until) values ($1, $2, $3, 'pending', $4, now() + interval '31 seconds')",
  hold: "update accounts set pending_debits_minor = pending_debits_minor + $2 where account_id = $1 and posted_credits_minor - posted_debits_minor - pending_debits_minor >= $2 returning account_id",
  insertTransfer:
    "insert into transfers (transfer_id, debit_account_id, amount_minor, state, reference) values ($1, $2, $3, 'pending', $4)",
  complete:
    "update orders set status = 'completed', iccid = $2, resolved_at = now(), lease_until = null where order_id = $1 and status = 'pending' returning order_id",
  post: "update transfers set state = 'posted', resolved_at = now() where reference = $1 and state = 'pending'",
  move: "update accounts set pending_debits_minor = pending_debits_minor - $2, posted_debits_minor = posted_debits_minor + $2 where account_id = $1",
  event: "insert into events (partner_id, payload) values ($1, $2)",
};

type Purchase = { client: number; n: number };
const keys = ({ client, n }: Purchase) => ({
  cart: `cart_${client}_${n}`,
  partner: `ptr_${client}`,
  account: `acc_${client}`,
  order: `ord_${client}_${n}`,
  transfer: `trf_${client}_${n}`,
  iccid: `89${String(client * 1_000_000 + n).padStart(17, "0")}`,
});
const PRICE = 500;
/** Carts each client may buy over the whole run (~1,000 purchases/s shared by 8+ clients, ~10 runs). */
const CARTS_PER_CLIENT = 30_000;

/** Ours, as the service runs a purchase: answers awaited, writes nobody reads deferred. */
async function purchaseOurs(pool: Pool, purchase: Purchase): Promise<void> {
  const k = keys(purchase);
  await inTransaction(pool, async (client) => {
    const cart = await client.query(SQL.lockCart, [k.cart, k.partner]);
    if (cart.rows.length !== 1) throw new Error(`no cart ${k.cart}`);
    await deferWrite(() => client.query(SQL.insertOrder, [k.order, k.partner, k.cart, PRICE]));
    const held = await client.query(SQL.hold, [k.account, PRICE]);
    if (held.rows.length !== 1) throw new Error("insufficient funds");
    await deferWrite(() => client.query(SQL.insertTransfer, [k.transfer, k.account, PRICE, k.order]));
  });
  await inTransaction(pool, async (client) => {
    const done = await client.query(SQL.complete, [k.order, k.iccid]);
    if (done.rows.length !== 1) throw new Error(`order ${k.order} not pending`);
    await deferWrite(async () => {
      await client.query(SQL.post, [k.order]);
      await client.query(SQL.move, [k.account, PRICE]);
      await client.query(SQL.event, [k.partner, { order_id: k.order, status: "completed" }]);
    });
  });
}

/**
 * postgres.js, its writes issued with the statement after them (coalesced into one write) and every
 * answer awaited before COMMIT: a failed write must fail the purchase, and postgres.js sends each
 * statement with its own Sync, so a COMMIT behind a failed one would answer ROLLBACK, not an error.
 */
async function purchasePostgresJs(sql: Sql, purchase: Purchase): Promise<void> {
  const k = keys(purchase);
  await sql.begin(async (tx) => {
    const cart =
      await tx`select cart_key, total_minor from carts where cart_key = ${k.cart} and partner_id = ${k.partner} for update`;
    if (cart.length !== 1) throw new Error(`no cart ${k.cart}`);
    const order = tx`insert into orders (order_id, partner_id, cart_key, status, total_minor, lease_until) values (${k.order}, ${k.partner}, ${k.cart}, 'pending', ${PRICE}, now() + interval '31 seconds')`;
    const held =
      await tx`update accounts set pending_debits_minor = pending_debits_minor + ${PRICE} where account_id = ${k.account} and posted_credits_minor - posted_debits_minor - pending_debits_minor >= ${PRICE} returning account_id`;
    await order;
    if (held.length !== 1) throw new Error("insufficient funds");
    await tx`insert into transfers (transfer_id, debit_account_id, amount_minor, state, reference) values (${k.transfer}, ${k.account}, ${PRICE}, 'pending', ${k.order})`;
  });
  await sql.begin(async (tx) => {
    const done =
      await tx`update orders set status = 'completed', iccid = ${k.iccid}, resolved_at = now(), lease_until = null where order_id = ${k.order} and status = 'pending' returning order_id`;
    if (done.length !== 1) throw new Error(`order ${k.order} not pending`);
    await Promise.all([
      tx`update transfers set state = 'posted', resolved_at = now() where reference = ${k.order} and state = 'pending'`,
      tx`update accounts set pending_debits_minor = pending_debits_minor - ${PRICE}, posted_debits_minor = posted_debits_minor + ${PRICE} where account_id = ${k.account}`,
      tx`insert into events (partner_id, payload) values (${k.partner}, ${{ order_id: k.order, status: "completed" } as unknown as string}::jsonb)`,
    ]);
  });
}

/**
 * postgres.js at its best: a reserved connection, BEGIN sent with the first statement and the last
 * write with COMMIT (each coalesced into one write), so as many round trips as ours; every answer
 * awaited, and COMMIT's own checked, since a COMMIT behind a failed statement answers ROLLBACK.
 */
async function purchasePostgresJsReserved(sql: Sql, purchase: Purchase): Promise<void> {
  const k = keys(purchase);
  await reserved(sql, async (tx) => {
    const [, cart] = await Promise.all([
      tx`begin`,
      tx`select cart_key, total_minor from carts where cart_key = ${k.cart} and partner_id = ${k.partner} for update`,
    ]);
    if (cart!.length !== 1) throw new Error(`no cart ${k.cart}`);
    const order = tx`insert into orders (order_id, partner_id, cart_key, status, total_minor, lease_until) values (${k.order}, ${k.partner}, ${k.cart}, 'pending', ${PRICE}, now() + interval '31 seconds')`;
    const held =
      await tx`update accounts set pending_debits_minor = pending_debits_minor + ${PRICE} where account_id = ${k.account} and posted_credits_minor - posted_debits_minor - pending_debits_minor >= ${PRICE} returning account_id`;
    await order;
    if (held.length !== 1) throw new Error("insufficient funds");
    await commitWith(tx, [
      tx`insert into transfers (transfer_id, debit_account_id, amount_minor, state, reference) values (${k.transfer}, ${k.account}, ${PRICE}, 'pending', ${k.order})`,
    ]);
  });
  await reserved(sql, async (tx) => {
    const [, done] = await Promise.all([
      tx`begin`,
      tx`update orders set status = 'completed', iccid = ${k.iccid}, resolved_at = now(), lease_until = null where order_id = ${k.order} and status = 'pending' returning order_id`,
    ]);
    if (done!.length !== 1) throw new Error(`order ${k.order} not pending`);
    await commitWith(tx, [
      tx`update transfers set state = 'posted', resolved_at = now() where reference = ${k.order} and state = 'pending'`,
      tx`update accounts set pending_debits_minor = pending_debits_minor - ${PRICE}, posted_debits_minor = posted_debits_minor + ${PRICE} where account_id = ${k.account}`,
      tx`insert into events (partner_id, payload) values (${k.partner}, ${{ order_id: k.order, status: "completed" } as unknown as string}::jsonb)`,
    ]);
  });
}

async function reserved(sql: Sql, work: (tx: Sql) => Promise<void>): Promise<void> {
  const tx = await sql.reserve();
  try {
    await work(tx);
  } catch (error) {
    await tx`rollback`.catch(() => undefined);
    throw error;
  } finally {
    tx.release();
  }
}

async function commitWith(tx: Sql, writes: Promise<unknown>[]): Promise<void> {
  const answers = await Promise.all([...writes, tx`commit`]);
  const commit = answers.at(-1) as { command?: string };
  if (commit.command !== "COMMIT") throw new Error(`COMMIT answered ${commit.command}`);
}

type Driver = { name: string; purchase(p: Purchase): Promise<void>; close(): Promise<void> };

async function seed(pool: Pool, clients: number, carts_per_client: number): Promise<void> {
  await pool.query(
    `insert into accounts (account_id, posted_credits_minor) select 'acc_' || c, 1e12 from generate_series(0, $1 - 1) c`,
    [clients],
  );
  await pool.query(
    `insert into carts (cart_key, partner_id, total_minor)
     select 'cart_' || c || '_' || n, 'ptr_' || c, ${PRICE} from generate_series(0, $1 - 1) c, generate_series(0, $2 - 1) n`,
    [clients, carts_per_client],
  );
}

/** Every client buys its own carts in order for `seconds`; returns purchases/s and CPU µs per purchase. */
async function run(driver: Driver, clients: number, seconds: number, postmaster: number, offset: number) {
  const before = {
    at: performance.now(),
    self: selfTicks(),
    pg: clusterTicks(postmaster),
    machine: machineBusyTicks(),
  };
  const until = before.at + seconds * 1000;
  const counts = await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      let n = 0;
      while (performance.now() < until && n < CARTS_PER_CLIENT - offset)
        await driver.purchase({ client, n: offset + n++ });
      return n;
    }),
  );
  const elapsed = (performance.now() - before.at) / 1000;
  const done = counts.reduce((a, b) => a + b, 0);
  const most = Math.max(...counts);
  const us = (ticks: number) => Math.round(((ticks / TICKS_PER_S) * 1e6) / done);
  const others =
    machineBusyTicks() -
    before.machine -
    (selfTicks() - before.self) -
    (clusterTicks(postmaster) - before.pg);
  return {
    done,
    most,
    per_s: Math.round(done / elapsed),
    driver_us: us(selfTicks() - before.self),
    postgres_us: us(clusterTicks(postmaster) - before.pg),
    others_pct: Math.round((100 * others) / TICKS_PER_S / elapsed),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      clients: { type: "string", default: "8,32" },
      duration: { type: "string", default: "10" },
      warmup: { type: "string", default: "2" },
      rounds: { type: "string", default: "2" },
    },
  });
  const client_counts = values.clients.split(",").map(Number);
  const seconds = Number(values.duration);
  const max_clients = Math.max(...client_counts);
  const module_path = process.env.POSTGRES_JS;
  if (!module_path)
    throw new Error("set POSTGRES_JS to postgres.js's src/index.js (see the top of this file)");
  const postgres = (await import(module_path)).default as (url: string, options: object) => Sql;
  const pg = await startOwnPostgres({ migrate: false });
  const setup = createPool(pg.url, 2, "drivers-setup");
  try {
    await setup.query(SCHEMA);
    await seed(setup, max_clients, CARTS_PER_CLIENT);
    await setup.query("vacuum analyze");
    const postmaster = (await pg.postmasterPid())!;
    const pool = createPool(pg.url, max_clients, "drivers-pg");
    const sql = postgres(pg.url, {
      max: max_clients,
      onnotice: () => undefined,
      connection: { TimeZone: "UTC" },
    });
    const drivers: Driver[] = [
      { name: "pg + pool.ts", purchase: (p) => purchaseOurs(pool, p), close: () => pool.end() },
      { name: "postgres.js", purchase: (p) => purchasePostgresJs(sql, p), close: async () => undefined },
      {
        name: "postgres.js reserved",
        purchase: (p) => purchasePostgresJsReserved(sql, p),
        close: () => sql.end(),
      },
    ];
    let offset = 0;
    for (const driver of drivers)
      offset += (await run(driver, max_clients, Number(values.warmup), postmaster, offset)).most;
    for (let round = 0; round < Number(values.rounds); round += 1) {
      for (const clients of client_counts) {
        const order = round % 2 === 0 ? drivers : [...drivers].reverse();
        for (const driver of order) {
          const figures = await run(driver, clients, seconds, postmaster, offset);
          offset += figures.most;
          const { most: _, ...shown } = figures;
          console.log(JSON.stringify({ round, clients, driver: driver.name, ...shown }));
        }
      }
    }
    for (const driver of drivers) await driver.close();
  } finally {
    await setup.end();
    await pg.stop();
  }
}

await main();

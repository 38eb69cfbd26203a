// The chaos run in small (test/support/chaos/, the engine of `npm run chaos`, with a short
// budget): two API processes SIGKILLed and restarted under a stream of purchases, top-ups and client retries while the carrier's
// faults change; afterwards the whole-system audit must pass. Then the audit itself is put to
// the test: each invariant it claims to check, broken on purpose in this throwaway database,
// must show up as the named breach.
// The seed is random and printed in the test's name; CHAOS_SEED=<n> npm test -- test/chaos.test.ts
// makes the same decisions again.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sql } from "kysely";
import { type AuditResult, auditSystem, formatAudit } from "./support/audit.ts";
import {
  CHAOS_END_USER,
  CHAOS_ES2PLUS_STOCK,
  CHAOS_SERVICE_ENV,
  CHAOS_SIMULATOR_ENV,
} from "./support/chaos/options.ts";
import { formatChaosReport, runChaos } from "./support/chaos/run.ts";
import { type Cluster, createPartner, request, startCluster } from "./support/cluster.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase({ catalog: true });
const cluster: Cluster = await startCluster({
  services: 2,
  databaseUrl: database.url,
  env: CHAOS_SERVICE_ENV,
  simulatorEnv: CHAOS_SIMULATOR_ENV,
  // Profiles from the SM-DP+ simulator over ES2+ and mutual TLS: the production path.
  es2plus: { ...CHAOS_ES2PLUS_STOCK, profiles_per_package: 500 },
  // Airalo's and eSIM Go's fakes as processes of their own: a share of the stream goes to each.
  suppliers: true,
});
// Registered after the database's own after() (which drops it), and node:test runs after() hooks
// in order: the last test stops the cluster itself, and this is the backstop if it never gets there.
after(() => cluster.stop());

const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));

test(`three SIGKILLs under purchases, top-ups, refunds and retries: the audit passes (seed ${seed})`, async (t) => {
  const lines: string[] = [];
  const report = await runChaos({
    seed,
    duration_s: 25,
    operations: 40,
    kills: 3,
    // This file's database lives on the suite's shared PostgreSQL: restarts have their own test
    // (test/db.postgres-restart.processes.test.ts), on a PostgreSQL of their own.
    postgres_restarts: 0,
    clients: 4,
    // Enough for a SIGKILLed sweep's refund to come free (its lease: one carrier operation and 5 s
    // per position in the round, claimDueRefunds) under a loaded CI; the drain ends when all is settled.
    drain_timeout_s: 60,
    crash_points: true,
    profiles: "es2plus",
    suppliers: true,
    cluster,
    log: (line) => lines.push(line),
  });
  const summary = formatChaosReport(report);
  t.diagnostic(summary);
  assert.equal(report.stats.kills, 3, summary);
  assert.ok(report.audit.figures.completed > 0, `something was bought:\n${summary}`);
  assert.deepEqual(report.client_breaches, [], `${lines.join("\n")}\n${summary}`);
  assert.deepEqual(report.audit.breaches, [], `${lines.join("\n")}\n${summary}`);
});

async function auditNow(): Promise<AuditResult> {
  return auditSystem({
    pool: database.pool,
    simulator: cluster.simulator,
    smtp: cluster.smtp,
    smdp: cluster.smdp,
    uniqueClientReferences: true,
  });
}

function assertBreach(result: AuditResult, check: string, mentions: string): void {
  const found = result.breaches.filter(
    (breach) => breach.startsWith(`[${check}]`) && breach.includes(mentions),
  );
  assert.ok(found.length > 0, `expected a [${check}] breach naming ${mentions}:\n${formatAudit(result)}`);
}

/** Breaks the books in one transaction-sized way, audits, then puts them back. */
async function whileBroken(
  breakIt: string,
  restore: string,
  expect: (result: AuditResult) => void,
  params: unknown[] = [],
): Promise<void> {
  await database.pool.query(breakIt, params);
  try {
    expect(await auditNow());
  } finally {
    await database.pool.query(restore, restore.includes("$1") ? params : []);
  }
}

/**
 * A completed new-eSIM order of `supplier`: the run's first, or one bought now when the run's random
 * stream completed none (the break test needs one of each whatever the seed).
 */
async function completedOf(supplier: "airalo" | "esimgo"): Promise<{ order_id: string; iccid: string }> {
  const find = () =>
    database.pool.query<{ order_id: string; iccid: string }>(
      `select order_id, iccid from orders where supplier = $1 and type = 'esim' and status = 'completed'
       order by seq limit 1`,
      [supplier],
    );
  const found = (await find()).rows[0];
  if (found) return found;
  const url = cluster.liveUrls()[0]!;
  const partner = await createPartner(url, `break-${supplier}`, 1_000_000);
  // Any package of the supplier's that is sold as a new eSIM (a new partner is offered every one).
  const pkg = await database.pool.query<{ package_id: string }>(
    `select package_id from packages where supplier = $1 and active and not top_up_only
     order by package_id limit 1`,
    [supplier],
  );
  assert.ok(pkg.rows[0], `the ${supplier} catalog sells a new eSIM`);
  const cart = await request(url, "POST", "/v1/orders/cart", {
    key: partner.api_key,
    body: { package_id: pkg.rows[0].package_id },
  });
  assert.equal(cart.status, 201, JSON.stringify(cart.body));
  const bought = await request(url, "POST", "/v1/orders/submit", {
    key: partner.api_key,
    body: { cart_key: cart.body.cart_key, ...CHAOS_END_USER, email: `break-${supplier}@example.com` },
  });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  // Its confirmation email goes out before the processes are stopped, or the audit misses it.
  for (let i = 0; i < 300; i++) {
    const sent = await database.pool.query("select 1 from email_deliveries where order_id = $1", [
      bought.body.orderID,
    ]);
    if (sent.rowCount) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await find()).rows[0]!;
}

/** A completed group order of the carrier's: the run's first, or one bought now (3 eSIMs, travellers). */
async function completedGroup(): Promise<string> {
  const find = () =>
    database.pool.query<{ order_id: string }>(
      `select order_id from orders where supplier = 'carrier' and quantity > 1 and status = 'completed'
       order by seq limit 1`,
    );
  const found = (await find()).rows[0];
  if (found) return found.order_id;
  const url = cluster.liveUrls()[0]!;
  const partner = await createPartner(url, "break-group", 1_000_000);
  const cart = await request(url, "POST", "/v1/orders/cart", {
    key: partner.api_key,
    body: { package_id: "fr-1gb-7d", quantity: 3 },
  });
  const travellers = [0, 1, 2].map((i) => ({
    first_name: `T${i}`,
    last_name: "Break",
    email: `break-${i}@example.com`,
  }));
  const bought = await request(url, "POST", "/v1/orders/submit", {
    key: partner.api_key,
    body: { cart_key: cart.body.cart_key, ...CHAOS_END_USER, travellers },
  });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  // Its confirmations go out before the processes are stopped, or the audit misses them.
  for (let i = 0; i < 300; i++) {
    const queued = await database.pool.query("select 1 from email_outbox where order_id = $1", [
      bought.body.orderID,
    ]);
    if (queued.rowCount === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return bought.body.orderID;
}

/** The group checks (test/support/audit/groups.ts), each broken in our records or the carrier's. */
async function breakGroup(order_id: string): Promise<void> {
  // A completed line whose ICCID is not the one the carrier made for its reference.
  await whileBroken(
    "update order_lines set iccid = iccid || 'x' where order_id = $1 and position = (select min(position) from order_lines where order_id = $1 and status = 'completed')",
    "update order_lines set iccid = left(iccid, length(iccid) - 1) where order_id = $1 and iccid like '%x'",
    (result) => assertBreach(result, "group-line-delivered-once", order_id),
    [order_id],
  );
  // A profile at the carrier under a reference of the group that no line of it has.
  await whileBroken(
    `insert into carrier_sim.profiles (reference, iccid, matching_id, smdp_address, external_package_id,
       data_mb_total, validity_days, end_user_email)
     values ($1 || '-49', '8901260999999999998', 'GHOST-2', 'smdp.example', 'X', 1, 1, 'a@example.com')`,
    "delete from carrier_sim.profiles where reference = $1 || '-49'",
    (result) => assertBreach(result, "nothing-delivered-unpaid", `${order_id}-49`),
    [order_id],
  );
  // Charged for more eSIMs than were made.
  await whileBroken(
    "update orders set total_minor = total_minor * 2 where order_id = $1",
    "update orders set total_minor = total_minor / 2 where order_id = $1",
    (result) => assertBreach(result, "group-charged-for-made", order_id),
    [order_id],
  );
  // A traveller's confirmation never delivered.
  const deliveries = await database.pool.query("select * from email_deliveries where order_id = $1", [
    order_id,
  ]);
  await database.pool.query("delete from email_deliveries where order_id = $1", [order_id]);
  try {
    assertBreach(await auditNow(), "group-emails", order_id);
  } finally {
    for (const row of deliveries.rows) {
      await database.pool.query(
        "insert into email_deliveries (order_id, position, message_id, recipient, delivered_at) values ($1, $2, $3, $4, $5)",
        [row.order_id, row.position, row.message_id, row.recipient, row.delivered_at],
      );
    }
  }
}

test("the audit fails loudly on each broken invariant, naming what broke", async () => {
  const airaloOrder = await completedOf("airalo");
  const group = await completedGroup();
  const esimgoOrder = await completedOf("esimgo");
  // No API process may repair what we break (the resolver, the email job): stop them first.
  for (let slot = 0; slot < cluster.services.length; slot++) await cluster.killService(slot);
  assert.deepEqual((await auditNow()).breaches, [], "clean before we break anything");

  const completed = await cluster.db
    .selectFrom("orders")
    .select(["order_id", "partner_id", "iccid", "client_reference", "cart_key"])
    .where("status", "=", "completed")
    .where("type", "=", "esim")
    // The carrier's: the checks below read the carrier's and the SM-DP+'s records.
    .where("supplier", "=", "carrier")
    // An order of one eSIM: a group's checks are its lines' (audit/groups.ts), broken apart below.
    .where("quantity", "=", 1)
    .orderBy("seq")
    .limit(1)
    .executeTakeFirstOrThrow();
  const id = completed.order_id;

  // A completed (charged, provisioned) order recorded as failed: money and carrier disagree.
  await whileBroken(
    "update orders set status = 'failed' where order_id = $1",
    "update orders set status = 'completed' where order_id = $1",
    (result) => {
      assertBreach(result, "failed-is-voided", id);
      assertBreach(result, "failed-nothing-delivered", id);
      assertBreach(result, "nothing-delivered-unpaid", id);
      assertBreach(result, "charged-for-completed-only", completed.partner_id);
    },
    [id],
  );

  // An order left pending.
  await whileBroken(
    "update orders set status = 'pending', resolved_at = null where order_id = $1",
    "update orders set status = 'completed', resolved_at = now() where order_id = $1",
    (result) => {
      assertBreach(result, "no-pending-order", id);
      // Set by hand, it is not on the resolver's list (migration 0046): the audit says so too.
      assertBreach(result, "pending-list", id);
    },
    [id],
  );

  // A posted transfer turned back into a hold: the wallet's running totals drift from it. (posted_seq
  // and the stored wallet balance follow the state, migrations 0006 and 0008; the restore puts both
  // back, so the transfer keeps its place in its wallet's chain.)
  const posting = await database.pool.query<{ posted_seq: string; wallet_balance_after_minor: string }>(
    "select posted_seq, wallet_balance_after_minor from ledger_transfers where reference = $1 and kind = 'purchase'",
    [id],
  );
  const { posted_seq, wallet_balance_after_minor } = posting.rows[0]!;
  await database.pool.query(
    `update ledger_transfers set state = 'voided', posted_seq = null, wallet_balance_after_minor = null
     where reference = $1 and kind = 'purchase'`,
    [id],
  );
  try {
    const result = await auditNow();
    assertBreach(result, "completed-is-posted", id);
    assertBreach(result, "ledger", "posted_debits_minor");
  } finally {
    await database.pool.query(
      `update ledger_transfers set state = 'posted', posted_seq = $2, wallet_balance_after_minor = $3
       where reference = $1 and kind = 'purchase'`,
      [id, posted_seq, wallet_balance_after_minor],
    );
  }

  // A stored balance_after that its wallet's transfers do not add up to.
  await whileBroken(
    "update ledger_transfers set wallet_balance_after_minor = wallet_balance_after_minor + 1 where reference = $1 and kind = 'purchase'",
    "update ledger_transfers set wallet_balance_after_minor = wallet_balance_after_minor - 1 where reference = $1 and kind = 'purchase'",
    (result) => assertBreach(result, "ledger", "stores balance"),
    [id],
  );

  // A second provisioning at the carrier for one order, and one for no order at all.
  await whileBroken(
    `insert into carrier_sim.profiles (reference, iccid, matching_id, smdp_address, external_package_id,
       data_mb_total, validity_days, end_user_email)
     values ('ord_ghost', '8901260999999999999', 'GHOST-1', 'smdp.example', 'X', 1, 1, 'a@example.com')`,
    "delete from carrier_sim.profiles where reference = 'ord_ghost'",
    (result) => assertBreach(result, "nothing-delivered-unpaid", "ord_ghost"),
  );

  // Two orders for one logical operation (same client_reference: the driver sent one purchase).
  await whileBroken(
    `insert into orders (order_id, partner_id, type, status, package_id, external_package_id, validity_days,
       total_minor, currency, client_reference, email, phone, first_name, last_name, iccid, resolved_at)
     select 'ord_twin', partner_id, 'topup', 'failed', package_id, external_package_id, validity_days,
       total_minor, currency,
       client_reference, email, phone, first_name, last_name, iccid, now()
     from orders where order_id = $1`,
    "delete from orders where order_id = 'ord_twin'",
    (result) => {
      assertBreach(result, "one-order-per-operation", "ord_twin");
      assertBreach(result, "one-transfer-per-order", "ord_twin");
      assertBreach(result, "failed-was-refused", "ord_twin");
    },
    [id],
  );

  // Money given back for an order that was never refunded: a refund transfer nobody asked for.
  await whileBroken(
    `insert into ledger_transfers (transfer_id, debit_account_id, credit_account_id, amount_minor, currency, kind,
       state, reference, resolved_at, posted_seq, wallet_balance_after_minor)
     select 'trf_forged_refund', credit_account_id, debit_account_id, amount_minor, currency, 'refund', 'posted',
       reference, now(), nextval('ledger_posted_seq'), 0
     from ledger_transfers where reference = $1 and kind = 'purchase'`,
    "delete from ledger_transfers where transfer_id = 'trf_forged_refund'",
    (result) => {
      assertBreach(result, "refund-once", id);
      assertBreach(result, "ledger", `order ${id} is completed but has 1 refund transfers`);
    },
    [id],
  );

  // The carrier cancelled an eSIM we still hold as sold: cancelled and never refunded.
  await whileBroken(
    "update carrier_sim.profiles set cancelled_at = now() where reference = $1",
    "update carrier_sim.profiles set cancelled_at = null where reference = $1",
    (result) => assertBreach(result, "refund-cancelled", id),
    [id],
  );

  // A profile the SM-DP+ released for no order of ours, and one left half-ordered (ALLOCATED).
  const spare = await database.pool.query<{ iccid: string }>(
    "select iccid from smdp_sim.profiles where state = 'AVAILABLE' order by iccid limit 2",
  );
  const [ghost, half] = spare.rows.map((row) => row.iccid);
  await whileBroken(
    `update smdp_sim.profiles set state = 'RELEASED' where iccid = $1;
     insert into smdp_sim.transitions (iccid, function, from_state, to_state) values ($1, 'ghost', 'AVAILABLE', 'RELEASED')`.replaceAll(
      "$1",
      `'${ghost}'`,
    ),
    `delete from smdp_sim.transitions where function = 'ghost';
     update smdp_sim.profiles set state = 'AVAILABLE' where iccid = '${ghost}'`,
    (result) => assertBreach(result, "smdp", ghost!),
  );
  await whileBroken(
    `update smdp_sim.profiles set state = 'ALLOCATED' where iccid = '${half}'`,
    `update smdp_sim.profiles set state = 'AVAILABLE' where iccid = '${half}'`,
    (result) => assertBreach(result, "smdp", "left ALLOCATED"),
  );

  // A confirmation email that was never delivered.
  const delivery = await database.pool.query("select * from email_deliveries where order_id = $1", [id]);
  await database.pool.query("delete from email_deliveries where order_id = $1", [id]);
  try {
    assertBreach(await auditNow(), "one-email-per-new-esim", id);
  } finally {
    const row = delivery.rows[0];
    await database.pool.query(
      "insert into email_deliveries (order_id, message_id, recipient, delivered_at) values ($1, $2, $3, $4)",
      [row.order_id, row.message_id, row.recipient, row.delivered_at],
    );
  }

  // A wallet whose running total no longer matches its transfers.
  await whileBroken(
    "update ledger_accounts set posted_credits_minor = posted_credits_minor + 1 where partner_id = $1",
    "update ledger_accounts set posted_credits_minor = posted_credits_minor - 1 where partner_id = $1",
    (result) => assertBreach(result, "ledger", "posted_credits_minor"),
    [completed.partner_id],
  );

  // An email the SMTP server received for an order that is not a completed new eSIM.
  const forged = await auditSystem({
    pool: database.pool,
    simulator: cluster.simulator,
    smtp: {
      messages: [
        ...cluster.smtp.messages,
        {
          raw: "Message-ID: <confirmation.ord_forged@esim.example>\r\nSubject: x\r\n\r\nhello",
          envelope: { mail_from: "orders@esim.example", rcpt_to: ["x@example.com"] },
        },
      ],
    },
  });
  assertBreach(forged, "smtp", "ord_forged");

  await breakSuppliers(airaloOrder, esimgoOrder);
  await breakGroup(group);

  const restored = await auditNow();
  assert.deepEqual(restored.breaches, [], `every corruption was undone:\n${formatAudit(restored)}`);
  const counted = await sql<{ n: number }>`select count(*)::int as n from orders`.execute(cluster.db);
  assert.equal(restored.figures.orders, counted.rows[0]!.n);
  await cluster.stop();
});

/** The supplier checks (test/support/audit/suppliers.ts), each broken in the fake's own records. */
async function breakSuppliers(
  airalo: { order_id: string; iccid: string },
  esimgo: { order_id: string; iccid: string },
): Promise<void> {
  const tag = `[esim-ref:${airalo.order_id}]`;
  const row = (
    await database.pool.query<{ id: string; description: string }>(
      "select id::text as id, description from airalo_sim.orders where strpos(description, $1) > 0",
      [tag],
    )
  ).rows[0]!;
  // Airalo's order lost our id: it carries none, and our order has no supplier order.
  await whileBroken(
    "update airalo_sim.orders set description = 'untagged ' || length($2::text) where id = $1::bigint",
    "update airalo_sim.orders set description = $2 where id = $1::bigint",
    (result) => {
      assertBreach(
        result,
        "supplier-airalo",
        `airalo order ${row.id} (esim, ICCID ${airalo.iccid}) carries 0`,
      );
      assertBreach(result, "completed-delivered-once", `${airalo.order_id} (partner`);
    },
    [row.id, row.description],
  );
  // Two ids of ours on one Airalo order.
  await whileBroken(
    "update airalo_sim.orders set description = $2 || ' [esim-ref:ord_someoneelse0000000000]' where id = $1::bigint",
    "update airalo_sim.orders set description = $2 where id = $1::bigint",
    (result) =>
      assertBreach(
        result,
        "supplier-airalo",
        `airalo order ${row.id} (esim, ICCID ${airalo.iccid}) carries 2`,
      ),
    [row.id, row.description],
  );
  // A second Airalo order for one of ours: never two supplier orders for one order; counts differ.
  await whileBroken(
    `insert into airalo_sim.orders (type, package_id, quantity, description, price_cents, net_price_cents)
     select type, package_id, quantity, description, price_cents, net_price_cents from airalo_sim.orders where id = $1::bigint`,
    "delete from airalo_sim.orders where id > $1::bigint and description = (select description from airalo_sim.orders where id = $1::bigint)",
    (result) => {
      assertBreach(result, "supplier-airalo", `order ${airalo.order_id} has 2 orders at airalo`);
      assertBreach(result, "supplier-airalo", "orders at airalo for");
    },
    [row.id],
  );
  // The supplier delivered for an order of ours that is not charged.
  await whileBroken(
    "update orders set status = 'failed' where order_id = $1",
    "update orders set status = 'completed' where order_id = $1",
    (result) =>
      assertBreach(
        result,
        "supplier-airalo",
        `is for ${airalo.order_id}, but that esim order of airalo is failed`,
      ),
    [airalo.order_id],
  );
  // Airalo's eSIM is not the one our order names.
  await whileBroken(
    "update airalo_sim.sims set iccid = '8900000000000000008' where iccid = $1",
    "update airalo_sim.sims set iccid = $1 where iccid = '8900000000000000008'",
    (result) => assertBreach(result, "completed-delivered-once", "airalo delivered 8900000000000000008"),
    [airalo.iccid],
  );
  // eSIM Go's order no longer linked to ours (neither our record of it nor the eSIM's customerRef).
  const link = (
    await database.pool.query<{ order_reference: string; customer_ref: string | null }>(
      `select i.order_reference, e.customer_ref from esimgo_orders i
       join esimgo_sim.esims e on e.order_reference = i.order_reference where i.reference = $1`,
      [esimgo.order_id],
    )
  ).rows[0]!;
  await database.pool.query("update esimgo_orders set order_reference = null where reference = $1", [
    esimgo.order_id,
  ]);
  await database.pool.query("update esimgo_sim.esims set customer_ref = null where order_reference = $1", [
    link.order_reference,
  ]);
  try {
    const result = await auditNow();
    assertBreach(
      result,
      "supplier-esimgo",
      `esimgo order ${link.order_reference} (esim, ICCID ${esimgo.iccid}) carries 0`,
    );
    assertBreach(result, "completed-delivered-once", `${esimgo.order_id} (partner`);
  } finally {
    await database.pool.query("update esimgo_orders set order_reference = $2 where reference = $1", [
      esimgo.order_id,
      link.order_reference,
    ]);
    await database.pool.query("update esimgo_sim.esims set customer_ref = $2 where order_reference = $1", [
      link.order_reference,
      link.customer_ref,
    ]);
  }
  // eSIM Go refunded (revoked) a bundle whose order of ours is still completed: refunded and kept paid.
  await whileBroken(
    "update esimgo_sim.assignments set state = 'revoked' where order_reference = $1 and state = 'queued'",
    "update esimgo_sim.assignments set state = 'queued' where order_reference = $1 and state = 'revoked'",
    (result) => assertBreach(result, "supplier-esimgo", `${esimgo.order_id} (partner`),
    [link.order_reference],
  );
}

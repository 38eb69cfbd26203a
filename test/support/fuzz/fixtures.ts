// The real objects of a fuzz run, made through the API before the first request.
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { generateApiKey } from "../../../src/partners/api-keys.ts";
import { createCart, createPartner, END_USER, purchase } from "../fixtures.ts";
import { expectStatus, request } from "../http.ts";
import { REQUEST_TIMEOUT_MS } from "./limits.ts";
import type { FuzzEnvironment, Holdings } from "./state.ts";

/** JSON for fixtures (test/support/http.ts): throws unless the status is the expected one. */
export async function callJson(
  env: Pick<FuzzEnvironment, "url">,
  method: string,
  path: string,
  options: { auth?: string; body?: unknown; headers?: Record<string, string>; expect?: number[] } = {},
): Promise<any> {
  const answer = await request(env.url, method, path, {
    key: options.auth,
    body: options.body,
    headers: options.headers,
    timeout_ms: REQUEST_TIMEOUT_MS,
  });
  return expectStatus(answer, options.expect ?? [200, 201], `fixture ${method} ${path}`);
}

function newPartner(env: FuzzEnvironment, admin_token: string, name: string, credit_minor: number) {
  return createPartner(env.url, {
    admin_token,
    name,
    credit_minor,
    reference: (partner_id) => `fuzz-seed-${partner_id}`,
  });
}

export async function prepareFixtures(env: FuzzEnvironment, admin_token: string): Promise<void> {
  const packages = (
    await sql<{ package_id: string; external_package_id: string }>`
      select package_id, external_package_id from packages where active order by package_id`.execute(env.db)
  ).rows;
  const destinations = (
    await sql<{ destination_code: string }>`
      select distinct destination_code from package_destinations order by destination_code`.execute(env.db)
  ).rows.map((row) => row.destination_code);
  if (packages.length === 0) throw new Error("fuzz: the catalog is empty (seed it first)");
  const ample = 1_000_000_000;
  const main = await newPartner(env, admin_token, "Fuzz Main", ample);
  const other = await newPartner(env, admin_token, "Fuzz Other", ample);
  const poor = await newPartner(env, admin_token, "Fuzz Poor", 0);
  const sacrificial = await newPartner(env, admin_token, "Fuzz Sacrificial", 0);
  const second = await callJson(env, "POST", `/admin/partners/${main.partner_id}/api-keys`, {
    auth: admin_token,
  });
  await callJson(env, "DELETE", `/admin/api-keys/${second.key_id}`, { auth: admin_token, expect: [204] });
  env.fixtures = {
    admin_token,
    main,
    other,
    poor,
    sacrificial,
    revoked_key: second.api_key,
    wrong_env_key: generateApiKey("production").api_key,
    unknown_key: generateApiKey("sandbox").api_key,
    packages,
    destinations,
    end_user: END_USER,
  };
  const pools = env.pools;
  pools.partner_ids.push(main.partner_id, other.partner_id, sacrificial.partner_id);
  pools.revoked_key_ids.push(second.key_id);

  // Real purchases, so valid requests reach the orders, eSIMs and top-ups behind them.
  const country = packages.find((p) => p.package_id === "fr-1gb-7d") ?? packages[0]!;
  for (const [partner, holder] of [
    [main, "main"],
    [other, "other"],
  ] as const) {
    const order = await purchase(env.url, partner.api_key, country.package_id);
    pools.holdings[holder].orders.push(order.orderID);
    pools.holdings[holder].iccids.push(order.purchases[0].iccid);
  }
  // The poor partner is credited exactly one eSIM and buys it: an eSIM to top up, and nothing left.
  const poorCart = await callJson(env, "POST", "/v1/orders/cart", {
    auth: poor.api_key,
    body: { package_id: country.package_id },
  });
  await callJson(env, "POST", `/admin/partners/${poor.partner_id}/wallet/credits`, {
    auth: admin_token,
    body: { amount_minor: poorCart.total.amount_minor, reference: `fuzz-seed-${poor.partner_id}` },
  });
  const poorOrder = await callJson(env, "POST", "/v1/orders/submit", {
    auth: poor.api_key,
    body: { cart_key: poorCart.cart_key, ...END_USER },
  });
  pools.holdings.poor.orders.push(poorOrder.orderID);
  pools.holdings.poor.iccids.push(poorOrder.purchases[0].iccid);
  pools.holdings.poor.used_carts.push(poorCart.cart_key);
  // Pending orders (the carrier is down for this magic email): the operator's settle has some to
  // settle, as `failed` (its `completed` is 409 carrier_disagrees: the carrier made nothing).
  for (let i = 0; i < 4; i++) {
    const stuck = await purchase(
      env.url,
      main.api_key,
      country.package_id,
      { email: "unavailable@carrier.test" },
      [503],
    );
    pools.holdings.main.orders.push(stuck.order_id);
    pools.pending_orders.push(stuck.order_id);
  }
  // A failed order (the carrier refuses this magic email).
  await purchase(env.url, main.api_key, country.package_id, { email: "decline@carrier.test" }, [502]);
  const page = await callJson(env, "GET", "/v1/profile/orders?limit=1", { auth: main.api_key });
  if (page.next_cursor) pools.holdings.main.cursors.push(page.next_cursor);
  const all = await callJson(env, "GET", "/v1/profile/orders?limit=100", { auth: main.api_key });
  for (const order of all.data) {
    if (!pools.holdings.main.orders.includes(order.orderID)) pools.holdings.main.orders.push(order.orderID);
  }

  // An eSIM kept for top-ups: its iccid is first among main's, its order in no pool, so no refund
  // (the partner's or the operator's, which name orders) takes it out of reach of the top-up route.
  const kept = await purchase(env.url, main.api_key, country.package_id);
  pools.holdings.main.iccids.unshift(kept.purchases[0].iccid);
  pools.topup_choices = await topupChoices(env, main.api_key, pools.holdings.main.iccids[0]!);
  if (env.operations.some((op) => op.path === "/v1/orders/submit-topup")) {
    // A stored Idempotency-Key outcome, so replays and reuse are exercised from the first request.
    const choice = pools.topup_choices[0];
    if (choice) {
      const key = `fuzz-seed-${randomUUID()}`;
      const topup = await callJson(env, "POST", "/v1/orders/submit-topup", {
        auth: main.api_key,
        headers: { "idempotency-key": key },
        body: { iccid: pools.holdings.main.iccids[0], ...choice, ...END_USER },
      });
      pools.holdings.main.orders.push(topup.orderID);
      pools.idempotency_keys.push(key);
    }
  }
  for (const [partner, holder] of [
    [main, "main"],
    [other, "other"],
    [poor, "poor"],
  ] as const) {
    for (let i = 0; i < 2; i++) {
      pools.holdings[holder].fresh_carts.push(await newCart(env, partner.api_key, country.package_id));
    }
  }
  for (const [partner, holder] of [
    [main, "main"],
    [other, "other"],
    [poor, "poor"],
  ] as const) {
    await webhookFixtures(env, partner.api_key, pools.holdings[holder]);
  }
  // An expired cart: the only way short of waiting 30 minutes is to age it in the database.
  const expired = await newCart(env, main.api_key, country.package_id);
  await sql`update carts set expires_at = now() - interval '1 minute' where cart_key = ${expired}`.execute(
    env.db,
  );
  pools.holdings.main.expired_carts.push(expired);
}

export async function topupChoices(env: FuzzEnvironment, api_key: string, iccid: string) {
  if (!env.operations.some((op) => op.path === "/v1/orders/available-topups/{iccid}")) {
    return env.fixtures.packages.slice(0, 3);
  }
  const offer = await callJson(env, "GET", `/v1/orders/available-topups/${iccid}`, { auth: api_key });
  return (offer.data as any[]).map((row) => ({
    package_id: row.package_id as string,
    external_package_id: row.external_package_id as string,
  }));
}

export async function newCart(env: FuzzEnvironment, api_key: string, package_id: string): Promise<string> {
  return (await createCart(env.url, api_key, package_id)).cart_key;
}

/** Two webhook endpoints, each with a test event and its delivery. */
async function webhookFixtures(env: FuzzEnvironment, api_key: string, holdings: Holdings): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const created = await callJson(env, "POST", "/v1/webhook-endpoints", {
      auth: api_key,
      body: { url: `http://127.0.0.1:9/fixture-${i}` },
    });
    const tested = await callJson(env, "POST", `/v1/webhook-endpoints/${created.endpoint_id}/test`, {
      auth: api_key,
      expect: [202],
    });
    const log = await callJson(env, "GET", `/v1/webhook-endpoints/${created.endpoint_id}/deliveries`, {
      auth: api_key,
    });
    holdings.endpoints.push(created.endpoint_id);
    holdings.events.push(tested.event_id);
    holdings.deliveries.push({ endpoint_id: created.endpoint_id, delivery_id: log.data[0].delivery_id });
  }
}

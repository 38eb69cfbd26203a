// The objects tests, engines and the benchmark need, made the way a partner and an operator make
// them: over HTTP (or inject), through the service. Partners and credits through /admin, carts and
// purchases through /v1. One end user for every purchase and top-up body.
import { bearer, expectStatus, type Json, request, type Target } from "./http.ts";

export type EndUser = { email: string; phone: string; first_name: string; last_name: string };

/** The end user of every purchase and top-up body; override a field where a test needs another. */
export const END_USER: EndUser = {
  email: "ana@example.com",
  phone: "+14155550123",
  first_name: "Ana",
  last_name: "Lima",
};

export function endUser(overrides: Partial<EndUser> = {}): EndUser {
  return { ...END_USER, ...overrides };
}

export const PACKAGE_ID = "fr-1gb-7d";

export type CreatedPartner = { partner_id: string; api_key: string; key_id: string };

export type PartnerOptions = {
  /** The operator's token (ADMIN_TOKEN of the service). */
  admin_token: string;
  name?: string;
  /** Credited once after creation when above 0. */
  credit_minor?: number;
  /** The credit's reference; defaults to `seed-<partner_id>`. */
  reference?: (partner_id: string) => string;
};

/** POST /admin/partners, then one credit: a partner and its first key. */
export async function createPartner(target: Target, options: PartnerOptions): Promise<CreatedPartner> {
  const created = await request(target, "POST", "/admin/partners", {
    headers: bearer(options.admin_token),
    body: { name: options.name ?? "Acme Travel" },
  });
  const partner = expectStatus(created, 201, "create partner") as CreatedPartner;
  const credit_minor = options.credit_minor ?? 0;
  if (credit_minor > 0) {
    const reference = options.reference?.(partner.partner_id) ?? `seed-${partner.partner_id}`;
    await creditWallet(target, options.admin_token, partner.partner_id, credit_minor, reference);
  }
  return { partner_id: partner.partner_id, api_key: partner.api_key, key_id: partner.key_id };
}

/** POST /admin/partners/:id/wallet/credits. */
export async function creditWallet(
  target: Target,
  admin_token: string,
  partner_id: string,
  amount_minor: number,
  reference: string,
): Promise<Json> {
  const credited = await request(target, "POST", `/admin/partners/${partner_id}/wallet/credits`, {
    headers: bearer(admin_token),
    body: { amount_minor, reference },
  });
  return expectStatus(credited, 201, "credit");
}

/** POST /admin/partners/:id/api-keys: a second key. */
export async function createApiKey(target: Target, admin_token: string, partner_id: string): Promise<Json> {
  const created = await request(target, "POST", `/admin/partners/${partner_id}/api-keys`, {
    headers: bearer(admin_token),
  });
  return expectStatus(created, 201, "create api key");
}

/** POST /v1/orders/cart; the cart (cart_key, total...). */
export async function createCart(
  target: Target,
  key: string,
  package_id = PACKAGE_ID,
  start_date?: string,
): Promise<Json> {
  const cart = await request(target, "POST", "/v1/orders/cart", {
    key,
    body: { package_id, ...(start_date ? { start_date } : {}) },
  });
  return expectStatus(cart, 201, "cart");
}

/** POST /v1/orders/submit with the end user; the answer as it comes, whatever its status. */
export function submitCart(target: Target, key: string, cart_key: string, overrides: Json = {}) {
  return request(target, "POST", "/v1/orders/submit", { key, body: { cart_key, ...END_USER, ...overrides } });
}

/** A cart, then its submit; throws unless the submit answers one of `expect` (200 by default). */
export async function purchase(
  target: Target,
  key: string,
  package_id = PACKAGE_ID,
  overrides: Json = {},
  expect: number[] = [200],
): Promise<Json> {
  const cart = await createCart(target, key, package_id);
  return expectStatus(await submitCart(target, key, cart.cart_key, overrides), expect, "submit");
}

/** A top-up body for an eSIM and one offered package, with the end user. */
export function topUpBody(
  iccid: string,
  offer: { package_id: string; external_package_id: string },
  overrides: Json = {},
): Json {
  return {
    iccid,
    package_id: offer.package_id,
    external_package_id: offer.external_package_id,
    ...END_USER,
    ...overrides,
  };
}

/** The wallet's available balance in minor units. */
export async function balance(target: Target, key: string): Promise<number> {
  return (await request(target, "GET", "/v1/profile/wallet", { key })).body.balance.amount_minor;
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at a time; results in order of i. */
export async function inParallel<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

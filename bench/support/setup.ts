// The data a run needs, made the way a partner and an operator make it: over HTTP, through the
// service (partners and credits through /admin, carts through /v1/orders/cart).
import { writeFile } from "node:fs/promises";

export type Partner = { partner_id: string; api_key: string };

const REQUEST_TIMEOUT_MS = 30_000;

async function call(
  url: string,
  method: string,
  path: string,
  bearer: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(url + path, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at a time, in order of i. */
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

export async function createPartners(
  url: string,
  admin_token: string,
  count: number,
  credit_minor: number,
): Promise<Partner[]> {
  return inParallel(count, 16, async (index) => {
    const created = await call(url, "POST", "/admin/partners", admin_token, {
      name: `bench partner ${index}`,
    });
    if (created.status !== 201)
      throw new Error(`create partner: ${created.status} ${JSON.stringify(created.body)}`);
    const { partner_id, api_key } = created.body as Partner;
    const credited = await call(url, "POST", `/admin/partners/${partner_id}/wallet/credits`, admin_token, {
      amount_minor: credit_minor,
      reference: `bench-seed-${partner_id}`,
    });
    if (credited.status !== 201)
      throw new Error(`credit: ${credited.status} ${JSON.stringify(credited.body)}`);
    return { partner_id, api_key };
  });
}

export type CartLine = { api_key: string; cart_key: string };

/**
 * `count` carts of `package_id`, going round the partners: consecutive lines belong to different
 * partners, so a load generator reading them in order keeps different wallets in flight.
 */
export async function createCarts(
  url: string,
  partners: Partner[],
  count: number,
  package_id: string,
): Promise<CartLine[]> {
  return inParallel(count, 32, async (index) => {
    const partner = partners[index % partners.length]!;
    const cart = await call(url, "POST", "/v1/orders/cart", partner.api_key, { package_id });
    if (cart.status !== 201) throw new Error(`cart: ${cart.status} ${JSON.stringify(cart.body)}`);
    return { api_key: partner.api_key, cart_key: cart.body.cart_key as string };
  });
}

export async function writeCartFile(file: string, carts: CartLine[]): Promise<void> {
  await writeFile(file, carts.map((cart) => `${cart.api_key} ${cart.cart_key}\n`).join(""));
}

export const END_USER = {
  email: "ana@example.com",
  phone: "+14155550123",
  first_name: "Ana",
  last_name: "Lima",
};

/** Submits carts outside any measurement (to have completed orders to replay or top up). */
export async function submitCarts(url: string, carts: CartLine[], concurrency: number): Promise<number> {
  const statuses = await inParallel(carts.length, concurrency, async (index) => {
    const cart = carts[index]!;
    const answer = await call(url, "POST", "/v1/orders/submit", cart.api_key, {
      cart_key: cart.cart_key,
      ...END_USER,
    });
    return answer.status;
  });
  return statuses.filter((status) => status === 200).length;
}

/** GET as a partner; the raw body bytes and status. */
export async function getBytes(
  url: string,
  path: string,
  api_key: string,
): Promise<{ status: number; body: Buffer }> {
  const response = await fetch(url + path, {
    headers: { authorization: `Bearer ${api_key}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

export async function postJson(
  url: string,
  path: string,
  bearer: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

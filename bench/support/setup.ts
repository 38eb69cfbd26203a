// The data a run needs, made the way a partner and an operator make it: over HTTP, through the
// service (partners and credits through /admin, carts through /v1/orders/cart), with the fixtures
// of the tests (test/support/fixtures.ts).
import { writeFile } from "node:fs/promises";
import { createCart, createPartner, inParallel, submitCart } from "../../test/support/fixtures.ts";

export type Partner = { partner_id: string; api_key: string };

export async function createPartners(
  url: string,
  admin_token: string,
  count: number,
  credit_minor: number,
): Promise<Partner[]> {
  return inParallel(count, 16, async (index) => {
    const { partner_id, api_key } = await createPartner(url, {
      admin_token,
      name: `bench partner ${index}`,
      credit_minor,
      reference: (id) => `bench-seed-${id}`,
    });
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
    const cart = await createCart(url, partner.api_key, package_id);
    return { api_key: partner.api_key, cart_key: cart.cart_key as string };
  });
}

export async function writeCartFile(file: string, carts: CartLine[]): Promise<void> {
  await writeFile(file, carts.map((cart) => `${cart.api_key} ${cart.cart_key}\n`).join(""));
}

/** Submits carts outside any measurement (to have completed orders to replay or top up). */
export async function submitCarts(url: string, carts: CartLine[], concurrency: number): Promise<number> {
  const statuses = await inParallel(carts.length, concurrency, async (index) => {
    const cart = carts[index]!;
    return (await submitCart(url, cart.api_key, cart.cart_key)).status;
  });
  return statuses.filter((status) => status === 200).length;
}

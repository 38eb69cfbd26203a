// The soak load: weighted flows of valid requests (discovery, wallet, orders, purchases,
// top-ups), each call timed and counted by the meter.
import type { Cluster } from "../cluster.ts";
import { type Answer, request, TransportError } from "../http.ts";
import type { Rng } from "../rng.ts";
import type { Meter } from "./meter.ts";
import {
  DESTINATIONS,
  type Flow,
  MAX_REMEMBERED,
  type Partner,
  REQUEST_TIMEOUT_MS,
  SOAK_END_USER,
} from "./options.ts";

export async function timed(
  meter: Meter,
  cluster: Cluster,
  rng: Rng,
  kind: string,
  expect: number,
  method: string,
  path: string,
  options: { key: string; body?: unknown; headers?: Record<string, string> },
): Promise<Answer | null> {
  const urls = cluster.liveUrls();
  const url = rng.pick(urls);
  const started = performance.now();
  try {
    const answer = await request(url, method, path, { ...options, timeout_ms: REQUEST_TIMEOUT_MS });
    meter.record(kind, performance.now() - started, String(answer.status), answer.status !== expect);
    return answer;
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
    meter.record(kind, performance.now() - started, error.kind, true);
    return null;
  }
}

export function remember(list: string[], value: string): void {
  list.push(value);
  if (list.length > MAX_REMEMBERED) list.splice(0, list.length - MAX_REMEMBERED);
}

export function flows(meter: Meter, cluster: Cluster, partners: Partner[], packages: string[]): Flow[] {
  const partner = (rng: Rng) => rng.pick(partners);
  const purchase = async (rng: Rng) => {
    const p = partner(rng);
    const cart = await timed(meter, cluster, rng, "cart", 201, "POST", "/v1/orders/cart", {
      key: p.api_key,
      body: { package_id: rng.pick(packages) },
    });
    if (cart?.status !== 201) return;
    const order = await timed(meter, cluster, rng, "submit", 200, "POST", "/v1/orders/submit", {
      key: p.api_key,
      body: { cart_key: cart.body.cart_key, ...SOAK_END_USER },
    });
    if (order?.status !== 200) return;
    remember(p.orders, order.body.orderID);
    remember(p.iccids, order.body.purchases[0].iccid);
  };
  /** A GET by a random partner; `path` draws its own randomness before the partner is picked. */
  const read = (name: string, weight: number, path: (rng: Rng) => string, kind = name): Flow => ({
    name,
    weight,
    requests: 1,
    run: async (rng) => {
      const target = path(rng);
      await timed(meter, cluster, rng, kind, 200, "GET", target, { key: partner(rng).api_key });
    },
  });
  return [
    read("discovery", 35, (rng) => `/v1/esim/destination/${rng.pick(DESTINATIONS)}/packages`),
    read("wallet", 15, () => "/v1/profile/wallet"),
    read("list orders", 12, () => "/v1/profile/orders?limit=20", "list"),
    {
      name: "get order",
      weight: 8,
      requests: 1,
      run: async (rng) => {
        const p = partner(rng);
        // Nothing bought yet: buy instead, so the request rate holds from the first second.
        if (p.orders.length === 0) return purchase(rng);
        await timed(meter, cluster, rng, "order", 200, "GET", `/v1/orders/${rng.pick(p.orders)}`, {
          key: p.api_key,
        });
      },
    },
    {
      name: "purchase",
      weight: 20,
      requests: 2,
      run: purchase,
    },
    {
      name: "top-up",
      weight: 10,
      requests: 2,
      run: async (rng) => {
        const p = partner(rng);
        if (p.iccids.length === 0) return purchase(rng);
        const iccid = rng.pick(p.iccids);
        const offer = await timed(
          meter,
          cluster,
          rng,
          "topup offer",
          200,
          "GET",
          `/v1/orders/available-topups/${iccid}`,
          {
            key: p.api_key,
          },
        );
        const rows = offer?.body.data as { package_id: string; external_package_id: string }[] | undefined;
        if (!rows || rows.length === 0) return;
        const row = rng.pick(rows);
        const order = await timed(
          meter,
          cluster,
          rng,
          "topup submit",
          200,
          "POST",
          "/v1/orders/submit-topup",
          {
            key: p.api_key,
            headers: { "idempotency-key": `soak-${Date.now()}-${rng.int(0, 1e9)}` },
            body: {
              iccid,
              package_id: row.package_id,
              external_package_id: row.external_package_id,
              ...SOAK_END_USER,
            },
          },
        );
        if (order?.status === 200) remember(p.orders, order.body.orderID);
      },
    },
  ];
}

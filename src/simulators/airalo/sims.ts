// After the sale: GET /v2/sims/{iccid} [SPEC install-esim], /usage [SPEC monitor-usage],
// /topups [DOC:get-top-up-package-list-11883031e0], /packages [DOC:get-esim-package-history-11883032e0].

import { type OrderRow, type SimRow, selectOrder, selectSim, selectTopupOrders } from "./airalo.sql.ts";
import { type Answer, airaloTime, businessError, notFound, ok } from "./answers.ts";
import { findPackage, topupsFor } from "./catalog.ts";
import type { Context } from "./context.ts";
import { listedOrderShape, packageShape, simShape, statusShape, USER } from "./shapes.ts";

const DAY_MS = 86_400_000;

export async function simDetails(context: Context, iccid: string, include: Set<string>): Promise<Answer> {
  const sim = await selectSim(context.pool, iccid);
  // UNCONFIRMED: the unknown-ICCID answer of this endpoint; the usage and top-up endpoints' 404.
  if (!sim) return notFound();
  const order = (await selectOrder(context.pool, sim.order_id))!;
  const simable = {
    ...listedOrderShape(order, [], new Set()),
    status: statusShape(order.status),
    user: USER,
    sharing: {
      link: `https://esims.cloud/sandbox/${sim.matching_id}`,
      access_code: sim.matching_id.slice(0, 4),
    },
  };
  const data: Record<string, unknown> = {
    ...simShape(sim),
    voucher_code: null,
    order: include.has("order")
      ? listedOrderShape(order, [], include.has("order.status") ? new Set(["status"]) : new Set())
      : null,
    brand_settings_name: order.brand_settings_name,
    recycled: sim.recycled_at !== null,
    recycled_at: sim.recycled_at ? airaloTime(sim.recycled_at) : null,
    simable,
  };
  // "succes" (sic): the example's meta message [SPEC install-esim].
  return ok(data, "succes");
}

type Usage = {
  remaining: number;
  total: number;
  expired_at: string | null;
  is_unlimited: boolean | null;
  status: "NOT_ACTIVE" | "ACTIVE" | "FINISHED" | "UNKNOWN" | "EXPIRED" | "RECYCLED";
  remaining_voice: number;
  remaining_text: number;
  total_voice: number;
  total_text: number;
};

/** What the eSIM has: its package's data plus its top-ups', validity from first use, stretched by top-ups. */
export function usageOf(sim: SimRow, topups: OrderRow[], now = new Date()): Usage {
  const blank = { remaining_voice: 0, remaining_text: 0, total_voice: 0, total_text: 0 };
  if (sim.recycled_at)
    return { remaining: 0, total: 0, expired_at: null, is_unlimited: null, status: "RECYCLED", ...blank };
  const packages = [sim.package_id, ...topups.map((order) => order.package_id)].map(
    (id) => findPackage(id)?.pkg,
  );
  const unlimited = packages.some((pkg) => pkg?.is_unlimited);
  const total = unlimited ? 0 : packages.reduce((sum, pkg) => sum + (pkg?.amount ?? 0), 0);
  const used = Number(sim.used_mb);
  if (!sim.activated_at)
    return {
      remaining: total,
      total,
      expired_at: null,
      is_unlimited: unlimited,
      status: "NOT_ACTIVE",
      ...blank,
    };
  let expires = sim.activated_at.getTime() + (packages[0]?.day ?? 0) * DAY_MS;
  topups.forEach((order, index) => {
    expires = Math.max(expires, order.created_at.getTime() + (packages[index + 1]?.day ?? 0) * DAY_MS);
  });
  const status = expires <= now.getTime() ? "EXPIRED" : !unlimited && used >= total ? "FINISHED" : "ACTIVE";
  return {
    // Unlimited packages report remaining and total 0 ([SPEC monitor-usage]).
    remaining: unlimited ? 0 : Math.max(0, total - used),
    total,
    expired_at: airaloTime(new Date(expires)),
    is_unlimited: unlimited,
    status,
    ...blank,
  };
}

/** Served from a per-ICCID cache for usage_cache_ms, as Airalo's 20-minute cache does. */
export async function simUsage(context: Context, iccid: string): Promise<Answer> {
  const cached = context.usage_cache.get(iccid);
  if (cached && cached.at_ms > Date.now() - context.settings().usage_cache_ms)
    return ok(cached.data, "api.succes");
  const sim = await selectSim(context.pool, iccid);
  if (!sim) return notFound();
  const data = usageOf(sim, await selectTopupOrders(context.pool, iccid));
  context.usage_cache.set(iccid, { at_ms: Date.now(), data });
  if (context.usage_cache.size > 100_000)
    context.usage_cache.delete(context.usage_cache.keys().next().value!);
  // "api.succes" (sic), the example's meta message [SPEC monitor-usage].
  return ok(data, "api.succes");
}

export async function simTopups(context: Context, iccid: string): Promise<Answer> {
  const sim = await selectSim(context.pool, iccid);
  if (!sim) return notFound();
  if (sim.recycled_at) return businessError(73, sim.iccid);
  return {
    status: 200,
    body: {
      pricing: { model: "net_pricing", discount_percentage: 0 },
      data: topupsFor(sim.package_id).map(packageShape),
    },
  };
}

/** The eSIM's packages, the original and each top-up, oldest first. */
export async function simPackages(context: Context, iccid: string): Promise<Answer> {
  const sim = await selectSim(context.pool, iccid);
  if (!sim) return notFound();
  const topups = await selectTopupOrders(context.pool, iccid);
  const usage = usageOf(sim, topups);
  const entries = [
    { id: sim.package_id, at: sim.created_at },
    ...topups.map((order) => ({ id: order.package_id, at: order.created_at })),
  ];
  const data = entries.map((entry, index) => {
    const pkg = findPackage(entry.id)?.pkg;
    return {
      id: Number(sim.id) * 1000 + index,
      status: usage.status === "NOT_ACTIVE" ? "NOT_ACTIVE" : usage.status,
      remaining: index === entries.length - 1 ? usage.remaining : 0,
      activated_at: sim.activated_at ? airaloTime(sim.activated_at) : null,
      expired_at: usage.expired_at,
      finished_at: usage.status === "FINISHED" ? airaloTime(new Date()) : null,
      package: pkg
        ? {
            id: pkg.id,
            type: pkg.type,
            price: pkg.price_cents / 100,
            net_price: pkg.net_price_cents / 100,
            amount: pkg.amount,
            day: pkg.day,
            is_unlimited: pkg.is_unlimited,
            title: pkg.title,
            data: pkg.data,
            short_info: null,
          }
        : null,
    };
  });
  return ok(data);
}

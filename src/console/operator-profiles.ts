// What the operator watches of ES2+ profiles, shown under the pending orders (the page for stuck
// work): refunds held on an ambiguous CancelOrder (nothing credited until settled), and each
// package's free ICCIDs, flagged below PROFILE_INVENTORY_LOW_THRESHOLD. The same reads as the
// CLI (`refunds held`, `profiles inventory`) and the /metrics gauges.
import { inventoryLevels } from "../carrier/es2plus/inventory-alerts.ts";
import { heldCancels } from "../carrier/es2plus/settle-cancel.ts";
import type { AppContext } from "../shared/context.ts";
import { formatInstant } from "./format.ts";
import { type Html, html } from "./html.ts";
import { scrollTable } from "./layout.ts";

const MAX_HELD_LISTED = 500;

async function heldRefunds(ctx: AppContext): Promise<Html> {
  const held = await heldCancels(ctx.pool, MAX_HELD_LISTED);
  if (held.length === 0) return html`<div class="panel"><p>No refund is held.</p></div>`;
  return html`${scrollTable(
    "Refunds held",
    html`<table><thead><tr><th scope="col">Order</th><th scope="col">ICCID</th><th scope="col">Profile type</th>
      <th scope="col">Held since</th></tr></thead>
      <tbody>${held.map(
        (h) => html`<tr><td class="mono">${h.reference}</td><td class="mono">${h.iccid}</td>
          <td>${h.profile_type}</td><td>${formatInstant(h.since)}</td></tr>`,
      )}</tbody></table>`,
  )}<p class="hint">Held: the SM-DP+ answered CancelOrder 8.2.1/3.5 (cancelled or downloaded) after our earlier
    CancelOrder's answer was lost. Nothing is credited until a download notification refuses the refund or you settle it
    after asking the SM-DP+'s operator: <code>npm run cli -- refunds settle &lt;order_id&gt; --cancelled|--installed</code>.</p>`;
}

async function inventory(ctx: AppContext): Promise<Html> {
  const threshold = ctx.config.profile_inventory_low_threshold;
  const levels = await inventoryLevels(ctx.pool, threshold);
  if (levels.length === 0) return html`<div class="panel"><p>No ES2+ inventory imported.</p></div>`;
  return html`${scrollTable(
    "Profile inventory",
    html`<table><thead><tr><th scope="col">Package</th><th scope="col">Profile type</th>
      <th scope="col" class="num">Total</th><th scope="col" class="num">Free</th><th scope="col">Flag</th></tr></thead>
      <tbody>${levels.map(
        (l) => html`<tr><td class="mono">${l.external_package_id}</td><td>${l.profile_type}</td>
          <td class="num">${l.total}</td><td class="num">${l.free}</td>
          <td>${l.low ? html`<span class="status failed">low</span>` : ""}</td></tr>`,
      )}</tbody></table>`,
  )}<p class="hint">Low: fewer than PROFILE_INVENTORY_LOW_THRESHOLD (${threshold}) free ICCIDs; when none is left every
    purchase of the package is refused. Add a range: <code>npm run cli -- profiles import</code>.</p>`;
}

/** Both sections, for the pending orders page; empty when profiles do not come from an SM-DP+. */
export async function profileSections(ctx: AppContext): Promise<Html> {
  if (ctx.config.carrier_profiles !== "es2plus") return html``;
  return html`<h2>Refunds held</h2>${await heldRefunds(ctx)}<h2>Profile inventory</h2>${await inventory(ctx)}`;
}

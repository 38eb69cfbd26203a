// `partners pricing`: a partner's price list, the same use cases as the operator API
// (src/catalog/partner-pricing.ts). Without options it shows the pricing; with --discount and/or
// --override it sets what is given and keeps the rest (any --override replaces all overrides).
import {
  getPartnerPricing,
  MAX_OVERRIDES,
  type Pricing,
  setPartnerPricing,
} from "../catalog/partner-pricing.ts";
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { CLI_ACTOR } from "../shared/actor.ts";
import { partnerId } from "./args.ts";
import {
  type CliContext,
  CliError,
  type Command,
  type CommandOutput,
  REPEATABLE_SEPARATOR,
} from "./command.ts";
import { fields, table } from "./output.ts";

type PricingChange = { discount_percent?: number; overrides?: Pricing["overrides"] };

function invalid(message: string): CliError {
  return new CliError("invalid_argument", message);
}

function discount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d{1,2}$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed >= 0 && parsed <= 90)) throw invalid("--discount must be a whole percent from 0 to 90");
  return parsed;
}

function overrides(value: string | undefined): Pricing["overrides"] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(REPEATABLE_SEPARATOR);
  if (items.length > MAX_OVERRIDES) throw invalid(`at most ${MAX_OVERRIDES} --override`);
  return items.map((item) => {
    const match = /^([\x21-\x3c\x3e-\x7e]{1,64})=(\d{1,12})$/.exec(item);
    const amount_minor = Number(match?.[2]);
    if (!match || !(amount_minor >= 1 && amount_minor <= MAX_AMOUNT_MINOR)) {
      throw invalid(
        `--override must be PACKAGE_ID=AMOUNT_MINOR with a positive whole amount, got "${item.slice(0, 80)}"`,
      );
    }
    return { package_id: match[1]!, amount_minor };
  });
}

function render(partner_id: string, pricing: Pricing, changed: boolean): CommandOutput {
  const text = [
    changed ? `Pricing of ${partner_id} set.` : `Pricing of ${partner_id}`,
    fields([["discount", `${pricing.discount_percent}%`]]),
    pricing.overrides.length === 0
      ? "No overrides."
      : table(
          [{ header: "PACKAGE" }, { header: "AMOUNT_MINOR", align: "right" }],
          pricing.overrides.map((o) => [o.package_id, String(o.amount_minor)]),
        ),
  ].join("\n");
  return { json: { partner_id, ...pricing }, text };
}

async function pricing(ctx: CliContext, partner_id: string, change: PricingChange): Promise<CommandOutput> {
  const current = await getPartnerPricing(ctx.db, partner_id);
  if (change.discount_percent === undefined && change.overrides === undefined) {
    return render(partner_id, current, false);
  }
  const next = await setPartnerPricing(
    ctx.db,
    partner_id,
    {
      discount_percent: change.discount_percent ?? current.discount_percent,
      overrides: change.overrides ?? current.overrides,
    },
    CLI_ACTOR,
  );
  return render(partner_id, next, true);
}

export const pricingCommands: readonly Command[] = [
  {
    group: "partners",
    name: "pricing",
    args: ["<partner_id>"],
    options_usage: "[--discount N] [--override PACKAGE_ID=AMOUNT_MINOR ...]",
    options: ["discount", "override"],
    summary: "Show or set a partner's prices: a discount off list prices (0-90%) and per-package overrides",
    example:
      "npm run cli -- partners pricing ptr_3x7Qm2VJk1Hn8sLw0aYdEe --discount 10 --override fr-1gb-7d=300",
    prepare: ({ positionals, options }) => {
      const partner_id = partnerId(positionals[0] ?? "");
      const change = { discount_percent: discount(options.discount), overrides: overrides(options.override) };
      return (ctx) => pricing(ctx, partner_id, change);
    },
  },
];

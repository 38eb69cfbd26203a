// `partners create|list|show`: the same use cases as the operator API (src/partners/).

import { walletOf } from "../ledger/accounts.ts";
import { createPartner } from "../partners/create-partner.ts";
import { findPartner, type KeySummary, partnerKeys, recentPartners } from "../partners/list-partners.ts";
import { ApiError } from "../shared/errors.ts";
import { limit, partnerId, partnerName } from "./args.ts";
import type { CliContext, Command, CommandOutput } from "./command.ts";
import { fields, formatMoney, money, table, timestamp } from "./output.ts";

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 1_000;
const SHOWN_ONCE = "The API key is shown once — store it now. Only its hash is kept.";

async function create(ctx: CliContext, name: string): Promise<CommandOutput> {
  const { config, db } = ctx;
  const created = await createPartner(db, {
    name,
    app_env: config.app_env,
    currency: config.currency,
  });
  const text = [
    `Partner created (${config.app_env}).`,
    fields([
      ["partner_id", created.partner_id],
      ["name", created.name],
      ["key_id", created.key_id],
      ["api_key", created.api_key],
    ]),
    "",
    SHOWN_ONCE,
  ].join("\n");
  return { json: created, text };
}

async function list(ctx: CliContext, max: number): Promise<CommandOutput> {
  const rows = await recentPartners(ctx.db, max);
  const partners = rows.map((row) => ({ ...row, created_at: timestamp(row.created_at) }));
  const text =
    partners.length === 0
      ? "No partners yet. Create one with: npm run cli -- partners create 'Acme Travel'"
      : table(
          [{ header: "PARTNER_ID" }, { header: "CREATED" }, { header: "NAME" }],
          partners.map((p) => [p.partner_id, p.created_at ?? "", p.name]),
        );
  return { json: { data: partners }, text };
}

function keyRows(keys: KeySummary[]) {
  return keys.map((key) => ({
    key_id: key.key_id,
    key_hint: key.key_hint,
    name: key.name,
    scope: key.scope,
    allowed_ips: key.allowed_ips,
    created_at: timestamp(key.created_at),
    revoked_at: timestamp(key.revoked_at),
    last_used_at: timestamp(key.last_used_at),
  }));
}

async function show(ctx: CliContext, partner_id: string): Promise<CommandOutput> {
  const partner = await findPartner(ctx.db, partner_id);
  const wallet = await walletOf(ctx.db, partner_id);
  if (!partner || !wallet) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
  const keys = keyRows(await partnerKeys(ctx.db, partner_id));
  const json = {
    partner_id,
    name: partner.name,
    created_at: timestamp(partner.created_at),
    balance: money(wallet.available_minor, wallet.currency),
    pending: money(wallet.pending_debits_minor, wallet.currency),
    keys,
  };
  const text = [
    `Partner ${partner_id}`,
    fields([
      ["name", partner.name],
      ["created", json.created_at],
      ["balance", formatMoney(wallet.available_minor, wallet.currency)],
      ["pending", formatMoney(wallet.pending_debits_minor, wallet.currency)],
    ]),
    "",
    `API keys (${keys.length})`,
    table(
      [
        { header: "KEY_ID" },
        { header: "HINT" },
        { header: "NAME" },
        { header: "SCOPE" },
        { header: "ALLOWED IPS" },
        { header: "CREATED" },
        { header: "REVOKED" },
        { header: "LAST USED" },
      ],
      keys.map((k) => [
        k.key_id,
        `${k.key_hint}…`,
        k.name || "-",
        k.scope,
        k.allowed_ips.length === 0 ? "any" : k.allowed_ips.join(","),
        k.created_at ?? "",
        k.revoked_at ?? "-",
        k.last_used_at ?? "-",
      ]),
    ),
  ].join("\n");
  return { json, text };
}

export const partnerCommands: readonly Command[] = [
  {
    group: "partners",
    name: "create",
    args: ["<name>"],
    summary: "Create a partner, its wallet and its first API key (the key is shown once)",
    example: "npm run cli -- partners create 'Acme Travel'",
    prepare: ({ positionals }) => {
      const name = partnerName(positionals[0] ?? "");
      return (ctx) => create(ctx, name);
    },
  },
  {
    group: "partners",
    name: "list",
    args: [],
    options_usage: `[--limit N]`,
    options: ["limit"],
    summary: `Newest partners first (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT})`,
    example: "npm run cli -- partners list --limit 20",
    prepare: ({ options }) => {
      const max = limit(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
      return (ctx) => list(ctx, max);
    },
  },
  {
    group: "partners",
    name: "show",
    args: ["<partner_id>"],
    summary:
      "A partner's name, API keys (hint, name, scope, allowed IPs, created, revoked, last used) and balance",
    example: "npm run cli -- partners show ptr_3x7Qm2VJk1Hn8sLw0aYdEe",
    prepare: ({ positionals }) => {
      const partner_id = partnerId(positionals[0] ?? "");
      return (ctx) => show(ctx, partner_id);
    },
  },
];

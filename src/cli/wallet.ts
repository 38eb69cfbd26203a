// `wallet credit|balance|ledger`: a partner's prepaid wallet, from the double-entry ledger.
import type { Config } from "../config.ts";
import { ensureOperatorAccounts, type LedgerEntry, walletEntries, walletOf } from "../ledger/accounts.ts";
import { CLI_ACTOR } from "../shared/actor.ts";
import { ApiError } from "../shared/errors.ts";
import { creditWallet } from "../wallet/credit-wallet.ts";
import { amountMinor, creditReference, limit, partnerId } from "./args.ts";
import type { CliContext, Command, CommandArgs, CommandOutput } from "./command.ts";
import { fields, formatMoney, money, table, timestamp } from "./output.ts";

const DEFAULT_LEDGER_LIMIT = 50;
const MAX_LEDGER_LIMIT = 1_000;

async function existingWallet(ctx: CliContext, partner_id: string) {
  const wallet = await walletOf(ctx.db, partner_id);
  // Every partner is created with its wallet, so no wallet means no partner.
  if (!wallet) throw new ApiError("partner_not_found", `No partner ${partner_id}.`);
  return wallet;
}

type Credit = { partner_id: string; amount_minor: number; reference: string };

function checkCredit({ positionals, options }: CommandArgs, config: Config): Credit {
  return {
    partner_id: partnerId(positionals[0] ?? ""),
    amount_minor: amountMinor(positionals[1] ?? "", config.currency),
    reference: creditReference(options.reference),
  };
}

async function credit(
  ctx: CliContext,
  { partner_id, amount_minor, reference }: Credit,
): Promise<CommandOutput> {
  // A credit moves money from the operator's funding account, which the service creates at
  // start-up; the CLI may be the first process ever to touch this database.
  await ensureOperatorAccounts(ctx.db, ctx.config.currency);
  const { balance, credited } = await creditWallet(
    ctx.db,
    { partner_id, amount_minor, reference },
    CLI_ACTOR,
  );
  const amount = formatMoney(amount_minor, balance.currency);
  const available = formatMoney(balance.available_minor, balance.currency);
  const text = credited
    ? `Credited ${amount} to ${partner_id} (reference ${reference}). Balance: ${available}.`
    : `Already credited: reference ${reference} credited ${amount} to ${partner_id} before; nothing changed. Balance: ${available}.`;
  const json = {
    partner_id,
    reference,
    amount: money(amount_minor, balance.currency),
    credited,
    balance: money(balance.available_minor, balance.currency),
  };
  return { json, text };
}

async function balance(ctx: CliContext, partner_id: string): Promise<CommandOutput> {
  const wallet = await existingWallet(ctx, partner_id);
  const json = {
    partner_id,
    balance: money(wallet.available_minor, wallet.currency),
    pending: money(wallet.pending_debits_minor, wallet.currency),
    posted_credits: money(wallet.posted_credits_minor, wallet.currency),
    posted_debits: money(wallet.posted_debits_minor, wallet.currency),
  };
  const text = [
    `Wallet of ${partner_id}`,
    fields([
      ["available", formatMoney(wallet.available_minor, wallet.currency)],
      ["pending", formatMoney(wallet.pending_debits_minor, wallet.currency)],
      ["credited", formatMoney(wallet.posted_credits_minor, wallet.currency)],
      ["spent", formatMoney(wallet.posted_debits_minor, wallet.currency)],
    ]),
  ].join("\n");
  return { json, text };
}

function entryJson(entry: LedgerEntry) {
  return {
    transfer_id: entry.transfer_id,
    created_at: timestamp(entry.created_at),
    kind: entry.kind,
    state: entry.state,
    direction: entry.direction,
    amount: money(entry.amount_minor, entry.currency),
    reference: entry.reference,
    resolved_at: timestamp(entry.resolved_at),
  };
}

function entriesTable(entries: LedgerEntry[]): string {
  return table(
    [
      { header: "TIME" },
      { header: "KIND" },
      { header: "STATE" },
      { header: "DIRECTION" },
      { header: "AMOUNT", align: "right" },
      { header: "REFERENCE" },
    ],
    entries.map((e) => [
      timestamp(e.created_at) ?? "",
      e.kind,
      e.state,
      e.direction,
      formatMoney(e.amount_minor, e.currency),
      e.reference,
    ]),
  );
}

async function ledger(ctx: CliContext, partner_id: string, max: number): Promise<CommandOutput> {
  await existingWallet(ctx, partner_id);
  // One row more than shown tells whether older transfers exist.
  const rows = await walletEntries(ctx.db, partner_id, max + 1);
  const entries = rows.slice(0, max);
  const has_more = rows.length > max;
  const lines = [entries.length === 0 ? `No transfers yet for ${partner_id}.` : entriesTable(entries)];
  if (has_more) lines.push(`(the ${max} most recent; older transfers exist: raise --limit)`);
  return { json: { partner_id, data: entries.map(entryJson), has_more }, text: lines.join("\n") };
}

export const walletCommands: readonly Command[] = [
  {
    group: "wallet",
    name: "credit",
    args: ["<partner_id>", "<amount_minor>"],
    options_usage: "--reference <ref>",
    options: ["reference"],
    summary: "Credit a wallet in whole minor units (1250 = 12.50); the same reference credits once",
    example: "npm run cli -- wallet credit ptr_3x7Qm2VJk1Hn8sLw0aYdEe 100000 --reference bank-transfer-123",
    prepare: (args, config) => {
      const input = checkCredit(args, config);
      return (ctx) => credit(ctx, input);
    },
  },
  {
    group: "wallet",
    name: "balance",
    args: ["<partner_id>"],
    summary: "Available and pending balance of a partner's wallet",
    example: "npm run cli -- wallet balance ptr_3x7Qm2VJk1Hn8sLw0aYdEe",
    prepare: ({ positionals }) => {
      const partner_id = partnerId(positionals[0] ?? "");
      return (ctx) => balance(ctx, partner_id);
    },
  },
  {
    group: "wallet",
    name: "ledger",
    args: ["<partner_id>"],
    options_usage: "[--limit N]",
    options: ["limit"],
    summary: `A wallet's transfers, newest first (default ${DEFAULT_LEDGER_LIMIT}, at most ${MAX_LEDGER_LIMIT})`,
    example: "npm run cli -- wallet ledger ptr_3x7Qm2VJk1Hn8sLw0aYdEe --limit 20",
    prepare: ({ positionals, options }) => {
      const partner_id = partnerId(positionals[0] ?? "");
      const max = limit(options.limit, DEFAULT_LEDGER_LIMIT, MAX_LEDGER_LIMIT);
      return (ctx) => ledger(ctx, partner_id, max);
    },
  },
];

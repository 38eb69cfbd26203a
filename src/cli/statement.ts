// `wallet statement`: a partner's statement for a date range, the same rows as
// GET /v1/profile/wallet/transactions (src/wallet/export-transactions.ts); --csv prints the CSV the
// API sends with Accept: text/csv, byte for byte.

import { DATE } from "../shared/day-range.ts";
import {
  CSV_COLUMNS,
  csvLine,
  statementTransactions,
  transactionLine,
} from "../wallet/export-transactions.ts";
import type { StatementLine } from "../wallet/list-transactions.ts";
import { partnerId } from "./args.ts";
import { type CliContext, CliError, type Command, type CommandOutput } from "./command.ts";
import { formatMoney, table } from "./output.ts";

type Range = { partner_id: string; from: string; to: string; csv: boolean };

function date(name: string, value: string | undefined): string {
  if (value === undefined || !DATE.test(value)) {
    throw new CliError("invalid_argument", `--${name} YYYY-MM-DD is required (a UTC day, included)`);
  }
  return value;
}

function csvOf(rows: StatementLine[]): string {
  return [csvLine(CSV_COLUMNS), ...rows.map(transactionLine)].join("");
}

function tableOf(rows: StatementLine[]): string {
  return table(
    [
      { header: "POSTED" },
      { header: "TYPE" },
      { header: "AMOUNT", align: "right" },
      { header: "BALANCE AFTER", align: "right" },
      { header: "ORDER / REFERENCE" },
    ],
    rows.map((t) => [
      t.created_at,
      t.type,
      formatMoney(t.amount.amount_minor, t.amount.currency),
      formatMoney(t.balance_after.amount_minor, t.balance_after.currency),
      t.order_id ?? t.reference ?? "",
    ]),
  );
}

async function statement(ctx: CliContext, range: Range): Promise<CommandOutput> {
  const rows: StatementLine[] = [];
  for await (const page of await statementTransactions(ctx.db, range)) rows.push(...page);
  const text = range.csv
    ? csvOf(rows).trimEnd()
    : rows.length === 0
      ? `No settled transactions for ${range.partner_id} from ${range.from} to ${range.to}.`
      : tableOf(rows);
  return { json: { partner_id: range.partner_id, from: range.from, to: range.to, data: rows }, text };
}

export const statementCommands: readonly Command[] = [
  {
    group: "wallet",
    name: "statement",
    args: ["<partner_id>"],
    options_usage: "--from YYYY-MM-DD --to YYYY-MM-DD [--csv]",
    options: ["from", "to", "csv"],
    summary: "A wallet's settled transactions from one UTC day to another (both included), oldest first",
    example:
      "npm run cli -- wallet statement ptr_3x7Qm2VJk1Hn8sLw0aYdEe --from 2026-11-01 --to 2026-11-30 --csv",
    prepare: ({ positionals, options }) => {
      const range = {
        partner_id: partnerId(positionals[0] ?? ""),
        from: date("from", options.from),
        to: date("to", options.to),
        csv: options.csv !== undefined,
      };
      return (ctx) => statement(ctx, range);
    },
  },
];

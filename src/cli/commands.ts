// Every command of the CLI, and the usage text made from them, so help can never miss one.
import { catalogCommands } from "./catalog.ts";
import type { Command } from "./command.ts";
import { configCommands } from "./config.ts";
import { deviceCommands } from "./devices.ts";
import { esimCommands } from "./esims.ts";
import { keyCommands } from "./keys.ts";
import { ledgerCommands } from "./ledger.ts";
import { operatorCommands } from "./operators.ts";
import { orderCommands } from "./orders.ts";
import { partnerCommands } from "./partners.ts";
import { pricingCommands } from "./pricing.ts";
import { profileCommands } from "./profiles.ts";
import { refundCommands } from "./refunds.ts";
import { statementCommands } from "./statement.ts";
import { walletCommands } from "./wallet.ts";

export const COMMANDS: readonly Command[] = [
  ...partnerCommands,
  ...pricingCommands,
  ...keyCommands,
  ...walletCommands,
  ...statementCommands,
  ...ledgerCommands,
  ...catalogCommands,
  ...deviceCommands,
  ...orderCommands,
  ...refundCommands,
  ...esimCommands,
  ...profileCommands,
  ...operatorCommands,
  ...configCommands,
];

export function findCommand(group: string | undefined, name: string | undefined): Command | undefined {
  return COMMANDS.find((command) => command.group === group && command.name === name);
}

export function commandLine(command: Command): string {
  return [command.group, command.name, ...command.args, command.options_usage ?? ""].join(" ").trim();
}

export function usageText(): string {
  const lines = COMMANDS.map(
    (command) => `  ${commandLine(command)}\n      ${command.summary}\n      e.g. ${command.example}`,
  );
  return [
    "Usage: npm run cli -- <group> <command> [arguments] [--json]",
    "",
    "The operator CLI of the eSIM ordering API. It reads the service's settings (APP_ENV, CURRENCY,",
    "DATABASE_URL, DATA_DIR, ...) and talks to the database directly: DATABASE_URL, or else the",
    "embedded PostgreSQL under DATA_DIR/pg (started for the command and stopped after it, unless the",
    "service already runs it). Pending migrations are applied first.",
    "",
    "Commands:",
    ...lines,
    "",
    "Options:",
    "  --json       print exactly one JSON document on stdout; errors as",
    '               {"error": {"code", "message"}} on stderr',
    "  -h, --help   this text (after a command: that command's usage)",
    "",
    "Money is given and shown in whole minor units of the deployment currency (1250 USD = 12.50 USD).",
    "Exit status: 0 done, 1 failed (or the ledger audit found a breach), 2 bad command line or settings.",
  ].join("\n");
}

export function commandUsage(command: Command): string {
  return [
    `Usage: npm run cli -- ${commandLine(command)} [--json]`,
    "",
    command.summary,
    `e.g. ${command.example}`,
  ].join("\n");
}

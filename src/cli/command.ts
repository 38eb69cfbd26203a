// What every CLI command is: a group and a name, its positional arguments and options, a line of
// help with an example, and a function that returns both renderings of its result. Commands never
// print; main.ts prints once, so `--json` always yields exactly one document on stdout.
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { Pool } from "../db/pool.ts";
import type { Database } from "../db/schema.ts";

export type CliContext = {
  config: Config;
  pool: Pool;
  db: Kysely<Database>;
  /** True with --json: nothing but the final document may reach stdout, and no progress bar. */
  json: boolean;
};

/** Options some commands take; main.ts refuses an option the chosen command does not declare. */
export type OptionName =
  | "reference"
  | "limit"
  | "completed"
  | "failed"
  | "discount"
  | "override"
  | "from"
  | "to"
  | "csv"
  | "cancelled"
  | "installed"
  | "name"
  | "scope"
  | "allow-ip"
  | "role"
  | "markup-percent"
  | "destinations"
  | "allow-removals";

/** Options given more than once (`--override a=1 --override b=2`) arrive joined by newlines. */
export const REPEATABLE_SEPARATOR = "\n";

export type CommandArgs = {
  positionals: string[];
  options: Partial<Record<OptionName, string>>;
};

export type CommandOutput = {
  /** The --json document. */
  json: unknown;
  /** The human rendering, printed as is. */
  text: string;
  /** 1 when the command ran but found something wrong (e.g. ledger breaches). */
  exit_code?: 0 | 1;
};

export type Command = CommandInfo & (NeedsDatabase | Standalone);

type NeedsDatabase = {
  /**
   * Checks the arguments (throwing CliError) and returns the work to do with the database. Split
   * in two so a mistyped command line fails at once, before a database is opened or started.
   */
  prepare: (args: CommandArgs, config: Config) => Work;
  standalone?: never;
};

/**
 * A command that must run whatever the configuration holds and opens no database (`config
 * check`): main.ts hands it the environment instead of loading the configuration.
 */
type Standalone = {
  standalone: (env: Record<string, string | undefined>) => CommandOutput;
  prepare?: never;
};

type CommandInfo = {
  group: string;
  name: string;
  /** Positional argument names, in order, e.g. ["<partner_id>"]. Exactly these are required. */
  args: readonly string[];
  /** Shown after the arguments in the usage line, e.g. "--reference <ref>". */
  options_usage?: string;
  options?: readonly OptionName[];
  summary: string;
  example: string;
};

export type Work = (ctx: CliContext) => Promise<CommandOutput>;

/** Exit status 2: the command line itself is wrong (or the configuration). 1: the command failed. */
export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;

/** An expected failure, with a stable code for --json scripts and a message for people. */
export class CliError extends Error {
  readonly code: string;
  readonly exit_code: number;
  /** Print usage after the message (human mode): the command's when known, else all of it. */
  readonly show_usage: boolean;
  readonly command: Command | undefined;

  constructor(
    code: string,
    message: string,
    options: { exit_code?: number; show_usage?: boolean; command?: Command } = {},
  ) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.exit_code = options.exit_code ?? EXIT_FAILURE;
    this.show_usage = options.show_usage ?? false;
    this.command = options.command;
  }
}

export function usageError(message: string, command?: Command): CliError {
  return new CliError("usage", message, {
    exit_code: EXIT_USAGE,
    show_usage: true,
    ...(command ? { command } : {}),
  });
}

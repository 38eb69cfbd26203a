// The operator CLI: `node src/cli/main.ts <group> <command> [args] [--json]` (npm run cli -- ...).
// This file only parses the command line, finds the command, opens the database and prints the
// outcome once: the commands themselves live one group per file beside it.
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config.ts";
import { ApiError } from "../shared/errors.ts";
import {
  CliError,
  type Command,
  type CommandArgs,
  type CommandOutput,
  EXIT_USAGE,
  type OptionName,
  REPEATABLE_SEPARATOR,
  usageError,
} from "./command.ts";
import { COMMANDS, commandLine, commandUsage, findCommand, usageText } from "./commands.ts";
import { withDatabase } from "./database.ts";

/** A command line longer than this is not typed by a person and not needed by a script. */
const MAX_ARGS = 64;

type Parsed = { kind: "help"; command?: Command } | { kind: "run"; command: Command; args: CommandArgs };

const OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  reference: { type: "string" },
  limit: { type: "string" },
  completed: { type: "boolean" },
  failed: { type: "boolean" },
  discount: { type: "string" },
  override: { type: "string", multiple: true },
  from: { type: "string" },
  to: { type: "string" },
  csv: { type: "boolean" },
  cancelled: { type: "boolean" },
  installed: { type: "boolean" },
  name: { type: "string" },
  scope: { type: "string" },
  "allow-ip": { type: "string", multiple: true },
  role: { type: "string" },
  "markup-percent": { type: "string" },
  destinations: { type: "string" },
  "allow-removals": { type: "boolean" },
} as const;

function parseCommandLine(argv: string[]): Parsed {
  if (argv.length > MAX_ARGS) throw usageError(`too many arguments (at most ${MAX_ARGS})`);
  // "-3" would otherwise be read as an unknown short option; say what is really wrong with it.
  const negative = argv.find((arg) => /^-\d+(\.\d*)?$/.test(arg));
  if (negative !== undefined) {
    throw new CliError(
      "invalid_argument",
      `"${negative}": negative numbers are refused (amounts and limits are positive whole numbers)`,
    );
  }
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [group, name, ...rest] = positionals;
  if (group === undefined || group === "help") return { kind: "help" };
  const command = findCommand(group, name);
  if (!command) throw usageError(`unknown command: ${[group, name].filter(Boolean).join(" ")}`);
  if (values.help) return { kind: "help", command };
  return { kind: "run", command, args: commandArgs(command, rest, values) };
}

function commandArgs(
  command: Command,
  rest: string[],
  values: Partial<Record<OptionName, unknown>>,
): CommandArgs {
  if (rest.length !== command.args.length) {
    const hint = command.args.length === 1 && rest.length > 1 ? " (quote a value that has spaces)" : "";
    throw usageError(`expected ${command.args.join(" ") || "no arguments"}${hint}`, command);
  }
  const options: CommandArgs["options"] = {};
  const names = [
    "reference",
    "limit",
    "completed",
    "failed",
    "discount",
    "override",
    "from",
    "to",
    "csv",
    "cancelled",
    "installed",
    "name",
    "scope",
    "allow-ip",
    "role",
    "markup-percent",
    "destinations",
  ] as const;
  for (const option of names) {
    const value = values[option];
    if (value === undefined) continue;
    if (!command.options?.includes(option))
      throw usageError(`${commandLine(command)} takes no --${option}`, command);
    options[option] = Array.isArray(value) ? value.join(REPEATABLE_SEPARATOR) : String(value);
  }
  return { positionals: rest, options };
}

function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof ApiError) return new CliError(error.code, error.message);
  if (error instanceof ConfigError) {
    // One line per problem: every one of them is listed, not only the first.
    const message = error.message.split("\n").join("\n  ");
    return new CliError("configuration_error", `configuration error: ${message}`, { exit_code: EXIT_USAGE });
  }
  // The operator's own tool: the message (e.g. "connect ECONNREFUSED") is what they need to see.
  return new CliError("internal_error", error instanceof Error ? error.message : String(error));
}

function printError(error: CliError, json: boolean): number {
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`);
  } else {
    process.stderr.write(`error: ${error.message}\n`);
    if (error.show_usage) {
      process.stderr.write(`\n${error.command ? commandUsage(error.command) : usageText()}\n`);
    }
  }
  return error.exit_code;
}

function printHelp(parsed: { command?: Command }, json: boolean): number {
  if (!json) {
    process.stdout.write(`${parsed.command ? commandUsage(parsed.command) : usageText()}\n`);
    return 0;
  }
  const commands = (parsed.command ? [parsed.command] : COMMANDS).map((command) => ({
    usage: commandLine(command),
    summary: command.summary,
    example: command.example,
  }));
  process.stdout.write(`${JSON.stringify({ commands }, null, 2)}\n`);
  return 0;
}

async function run(command: Command, args: CommandArgs, json: boolean): Promise<CommandOutput> {
  if (command.standalone) return command.standalone(process.env);
  const config = loadConfig();
  return withDatabase(config, json, command.prepare(args, config));
}

async function main(argv: string[]): Promise<number> {
  // Known before parsing, so even a malformed command line gets its error in the asked-for format.
  const json = argv.includes("--json");
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === "help") return printHelp(parsed, json);
    const output = await run(parsed.command, parsed.args, json);
    process.stdout.write(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`);
    return output.exit_code ?? 0;
  } catch (error) {
    return printError(toCliError(error), json);
  }
}

// exitCode rather than process.exit(): stdout to a pipe is flushed before the process ends.
process.exitCode = await main(process.argv.slice(2));

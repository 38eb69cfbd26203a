#!/usr/bin/env node
// `esim-partner`: the SDK's command line (`npx esim-partner listen --forward-to URL`). The library
// itself stays free of `node:` imports; only this command, which partners run on their laptops,
// uses Node's own modules.
import { parseArgs } from "node:util";
import { SDK_VERSION } from "../core/transport.ts";
import { UsageError } from "./errors.ts";
import { listen } from "./listen.ts";

const USAGE = `esim-partner ${SDK_VERSION}

Usage: esim-partner listen --forward-to <url> [options]

Follows GET /v1/events and POSTs each new event to <url>, signed the Standard Webhooks way with a
secret it prints at start, so the code that verifies production deliveries verifies these too.

Options:
  --forward-to <url>   your local receiver, e.g. http://localhost:4242/hooks (required)
  --api-key <key>      your API key (default: $API_KEY)
  --base-url <url>     the API's origin (default: $BASE), e.g. http://localhost:3000
  --secret <whsec_…>   sign with this secret (default: the state file's, else a new one)
  --state <file>       where the position is kept (default: .esim-partner-listen.json)
  -h, --help           this text
  -v, --version        the version
`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "forward-to": { type: "string" },
      "api-key": { type: "string" },
      "base-url": { type: "string" },
      secret: { type: "string" },
      state: { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
  });
  if (values.version) return print(SDK_VERSION);
  if (values.help || positionals.length === 0) return print(USAGE);
  if (positionals[0] !== "listen" || positionals.length > 1) {
    throw new UsageError(`unknown command: ${positionals.join(" ")}`);
  }
  return listen({
    forward_to: required(values["forward-to"], "--forward-to"),
    api_key: required(values["api-key"] ?? process.env.API_KEY, "--api-key (or API_KEY)"),
    base_url: required(values["base-url"] ?? process.env.BASE, "--base-url (or BASE)"),
    secret: values.secret ?? null,
    state_file: values.state ?? ".esim-partner-listen.json",
  });
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === "") throw new UsageError(`${name} is required`);
  return value;
}

function print(text: string): number {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const usage =
      error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    process.stderr.write(`esim-partner: ${(error as Error).message}\n${usage ? `\n${USAGE}` : ""}`);
    process.exitCode = usage ? 2 : 1;
  },
);

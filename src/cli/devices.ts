// `devices import <file>`: the operator's list of eSIM-capable devices replaces the one partners
// read at GET /v1/compatible-devices (src/catalog/compatible-devices.ts: every row checked, the
// list taken whole in one transaction or not at all). `devices list [query]` shows what is there.
import {
  DevicesFileError,
  importCompatibleDevices,
  listCompatibleDevices,
} from "../catalog/compatible-devices.ts";
import { CLI_ACTOR } from "../shared/actor.ts";
import type { CliContext, Command, CommandOutput } from "./command.ts";
import { CliError } from "./command.ts";
import { fields, table } from "./output.ts";

const MAX_PATH_CHARS = 4_096;
/** Devices a `devices list` prints: the whole shipped list, and a few hundred more. */
const MAX_LISTED = 1_000;

async function importFile(ctx: CliContext, file: string): Promise<CommandOutput> {
  try {
    const report = await importCompatibleDevices(ctx.db, file, CLI_ACTOR);
    return {
      json: { file, ...report },
      text: [
        `Compatible devices replaced from ${file}.`,
        fields([
          ["devices", report.device_count],
          ["updated at", report.updated_at],
        ]),
      ].join("\n"),
    };
  } catch (error) {
    if (error instanceof DevicesFileError)
      throw new CliError("invalid_devices_file", `${file}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "EACCES")
      throw new CliError("file_not_readable", `${file}: cannot read the file (${code})`);
    throw error;
  }
}

async function listDevices(ctx: CliContext, q: string | null): Promise<CommandOutput> {
  const list = await listCompatibleDevices(ctx.db, { q, limit: MAX_LISTED });
  return {
    json: list,
    text: [
      `${list.data.length} devices (list of ${list.updated_at})`,
      table(
        [{ header: "BRAND" }, { header: "MODEL" }, { header: "OS" }],
        list.data.map((d) => [d.brand, d.model, d.os]),
      ),
    ].join("\n"),
  };
}

export const deviceCommands: readonly Command[] = [
  {
    group: "devices",
    name: "import",
    args: ["<file.csv|file.json>"],
    summary: "Replace the compatible devices list (CSV brand,model,os or a JSON array); all rows or none",
    example: "npm run cli -- devices import ./devices-2026-12.csv",
    prepare: ({ positionals }) => {
      const file = positionals[0] ?? "";
      if (file === "" || file.length > MAX_PATH_CHARS)
        throw new CliError("invalid_argument", "give a file path");
      return (ctx) => importFile(ctx, file);
    },
  },
  {
    group: "devices",
    name: "list",
    args: [],
    options_usage: "[--name <brand or model>]",
    options: ["name"],
    summary: "Show the compatible devices list, or the devices whose brand or model contains --name",
    example: "npm run cli -- devices list --name pixel",
    prepare: ({ options }) => {
      const q = options.name?.trim() || null;
      if (q !== null && q.length > 64)
        throw new CliError("invalid_argument", "--name is at most 64 characters");
      return (ctx) => listDevices(ctx, q);
    },
  },
];

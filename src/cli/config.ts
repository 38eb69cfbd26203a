// `config check`: the environment read exactly as start-up reads it (src/config.ts), without
// starting anything. Every problem is listed with its variable and what was expected, exit 1; with
// none, the effective settings are printed with every secret hidden, so the output can be pasted
// into a ticket or a deploy log.
import { pemFileProblems } from "../carrier/es2plus/compose.ts";
import { type Config, ConfigError, type ConfigProblem, loadConfig } from "../config.ts";
import type { Command, CommandOutput } from "./command.ts";
import { fields } from "./output.ts";

/** Settings whose value is a secret, by name: shown only as set or not. */
const SECRET_SETTING = /(_token|_api_key|_secret_key|_client_secret)$/;
/** URL query parameters that may carry a credential (`?password=` in a PostgreSQL URL). */
const SECRET_PARAMETER = /pass|secret|token|key/i;
const HIDDEN = "****";

type Shown = string | number | boolean | null;

/** A URL with its password and any credential-like query parameter replaced by ****. */
function maskUrl(value: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return HIDDEN;
  }
  if (parsed.password !== "") parsed.password = HIDDEN;
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, HIDDEN);
  }
  return parsed.toString();
}

function shown(name: string, value: unknown): Shown {
  if (SECRET_SETTING.test(name)) return value === null ? null : "(set, hidden)";
  if (typeof value === "string" && /(^|_|\.)url$/.test(name)) return maskUrl(value);
  if (Array.isArray(value)) return value.length === 0 ? null : value.join(", ");
  return value as Shown;
}

/** Every effective setting, nested ones (es2plus) flattened to `es2plus.url`, secrets hidden. */
export function effectiveSettings(config: Config): Record<string, Shown> {
  const settings: Record<string, Shown> = {};
  for (const [name, value] of Object.entries(config)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [inner, nested] of Object.entries(value)) {
        settings[`${name}.${inner}`] = shown(`${name}.${inner}`, nested);
      }
    } else {
      settings[name] = shown(name, value);
    }
  }
  return settings;
}

function problemsFound(problems: readonly ConfigProblem[]): CommandOutput {
  const count = problems.length;
  const text = [
    `Configuration: ${count} ${count === 1 ? "problem" : "problems"}; the service would refuse to start.`,
    ...problems.map(({ variable, problem }) => `  ${variable}: ${problem}`),
  ].join("\n");
  return { json: { ok: false, problems }, text, exit_code: 1 };
}

function check(env: Record<string, string | undefined>): CommandOutput {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return problemsFound(error.problems);
    throw error;
  }
  const files = pemFileProblems(config);
  if (files.length > 0) return problemsFound(files);
  const settings = effectiveSettings(config);
  const text = [
    `Configuration OK (APP_ENV=${config.app_env}). Effective settings, secrets hidden:`,
    fields(
      Object.entries(settings).map(([name, value]) => [name, value === null ? "(not set)" : String(value)]),
    ),
  ].join("\n");
  return { json: { ok: true, settings }, text };
}

export const configCommands: readonly Command[] = [
  {
    group: "config",
    name: "check",
    args: [],
    summary:
      "Read the settings as start-up would; list every problem (variable: what is expected) and exit 1, or print the effective settings, secrets hidden",
    example: "APP_ENV=production npm run cli -- config check",
    standalone: check,
  },
];

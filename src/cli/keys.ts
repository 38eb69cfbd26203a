// `keys issue|revoke`: key rotation from the terminal. Revocation goes through revokeApiKey, whose
// transaction notifies `api_key_revoked`, so every running API process drops the key at once.
// Both are audited as the operator's CLI (issue 31).
import { issueApiKey } from "../partners/issue-api-key.ts";
import { checkKeyAccess, type KeyAccessInput } from "../partners/key-access.ts";
import { revokeApiKey } from "../partners/revoke-api-key.ts";
import { CLI_ACTOR } from "../shared/actor.ts";
import { keyId, partnerId } from "./args.ts";
import { type CliContext, type Command, type CommandOutput, REPEATABLE_SEPARATOR } from "./command.ts";
import { fields } from "./output.ts";

/** Who the audit log says made a change from the terminal: the operator, at no address. */

async function issue(ctx: CliContext, partner_id: string, options: KeyAccessInput): Promise<CommandOutput> {
  const issued = await issueApiKey(ctx.db, {
    partner_id,
    app_env: ctx.config.app_env,
    actor: CLI_ACTOR,
    options,
  });
  const text = [
    `API key issued for ${partner_id} (${ctx.config.app_env}).`,
    fields([
      ["key_id", issued.key_id],
      ["api_key", issued.api_key],
      ["name", issued.name || "-"],
      ["scope", issued.scope],
      ["allowed_ips", issued.allowed_ips.length === 0 ? "any address" : issued.allowed_ips.join(", ")],
    ]),
    "",
    "The API key is shown once — store it now. Revoke the old key once the partner has switched.",
  ].join("\n");
  return { json: { partner_id, ...issued }, text };
}

async function revoke(ctx: CliContext, key_id: string): Promise<CommandOutput> {
  await revokeApiKey(ctx.db, key_id, CLI_ACTOR);
  return {
    json: { key_id, revoked: true },
    text: `API key ${key_id} revoked; requests with it are refused from now on.`,
  };
}

export const keyCommands: readonly Command[] = [
  {
    group: "keys",
    name: "issue",
    args: ["<partner_id>"],
    options_usage: "[--name NAME] [--scope full|read_only] [--allow-ip CIDR]...",
    options: ["name", "scope", "allow-ip"],
    summary:
      "Issue another API key for a partner (rotation: issue the new, then revoke the old); --allow-ip may repeat",
    example:
      "npm run cli -- keys issue ptr_3x7Qm2VJk1Hn8sLw0aYdEe --name 'Reporting' --scope read_only --allow-ip 203.0.113.0/24",
    // Checked here, before a database is opened, by the check the API and the consoles use.
    prepare: ({ positionals, options }) => {
      const partner_id = partnerId(positionals[0] ?? "");
      const access = checkKeyAccess({
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(options.scope === undefined ? {} : { scope: options.scope }),
        ...(options["allow-ip"] === undefined
          ? {}
          : { allowed_ips: options["allow-ip"].split(REPEATABLE_SEPARATOR) }),
      });
      return (ctx) => issue(ctx, partner_id, access);
    },
  },
  {
    group: "keys",
    name: "revoke",
    args: ["<key_id>"],
    summary: "Revoke an API key at once, in every running API process",
    example: "npm run cli -- keys revoke key_Vb2q9TnK0cLm4Xs7pRwZfA",
    prepare: ({ positionals }) => {
      const key_id = keyId(positionals[0] ?? "");
      return (ctx) => revoke(ctx, key_id);
    },
  },
];

// `keys issue|revoke`: key rotation from the terminal. Revocation goes through revokeApiKey, whose
// transaction notifies `api_key_revoked`, so every running API process drops the key at once.
import { issueApiKey } from "../partners/issue-api-key.ts";
import { revokeApiKey } from "../partners/revoke-api-key.ts";
import { keyId, partnerId } from "./args.ts";
import type { CliContext, Command, CommandOutput } from "./command.ts";
import { fields } from "./output.ts";

async function issue(ctx: CliContext, partner_id: string): Promise<CommandOutput> {
  const issued = await issueApiKey(ctx.db, { partner_id, app_env: ctx.config.app_env });
  const text = [
    `API key issued for ${partner_id} (${ctx.config.app_env}).`,
    fields([
      ["key_id", issued.key_id],
      ["api_key", issued.api_key],
    ]),
    "",
    "The API key is shown once — store it now. Revoke the old key once the partner has switched.",
  ].join("\n");
  return { json: { partner_id, ...issued }, text };
}

async function revoke(ctx: CliContext, key_id: string): Promise<CommandOutput> {
  await revokeApiKey(ctx.db, key_id);
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
    summary: "Issue another API key for a partner (rotation: issue the new, then revoke the old)",
    example: "npm run cli -- keys issue ptr_3x7Qm2VJk1Hn8sLw0aYdEe",
    prepare: ({ positionals }) => {
      const partner_id = partnerId(positionals[0] ?? "");
      return (ctx) => issue(ctx, partner_id);
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

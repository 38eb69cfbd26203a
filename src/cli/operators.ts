// `operators invite EMAIL --role ROLE`: an operator user invited with a one-time link, printed here
// (the first operator user has nobody to invite them from the console). The link goes to
// PUBLIC_BASE_URL (default http://localhost:PORT) and works once, for 72 hours.
import { inviteUser } from "../people/invite-user.ts";
import { OPERATOR_ROLES } from "../people/roles.ts";
import { renderUser } from "../people/users.ts";
import { CLI_ACTOR } from "../shared/actor.ts";
import { CliError, type Command } from "./command.ts";
import { fields } from "./output.ts";

export const operatorCommands: readonly Command[] = [
  {
    group: "operators",
    name: "invite",
    args: ["<email>"],
    options_usage: `--role ${OPERATOR_ROLES.join("|")}`,
    options: ["role"],
    summary: "Invite a person to the operator console; prints their one-time link (72 hours)",
    example: "npm run cli -- operators invite ops@esim.example --role admin",
    prepare: ({ positionals, options }) => {
      const email = positionals[0] ?? "";
      const role = options.role ?? "";
      if (!(OPERATOR_ROLES as readonly string[]).includes(role))
        throw new CliError("invalid_argument", `--role must be one of ${OPERATOR_ROLES.join(", ")}`);
      return async (ctx) => {
        const { user, link } = await inviteUser(ctx.db, ctx.config, {
          realm: "operator",
          partner_id: null,
          email,
          role,
          actor: CLI_ACTOR,
          send_email: false,
        });
        const text = [
          `Invited ${user.email} as ${user.role}.`,
          fields([["user_id", user.user_id]]),
          "",
          "Their one-time link (valid 72 hours; give it to them, it is shown once):",
          link,
        ].join("\n");
        return { json: { user: renderUser(user), link }, text };
      };
    },
  },
];

// The emails of people's one-time links (issue 31): an invitation (72 h) and a password reset
// (1 h). They go out through the service's mail transport (notifications/mailer.ts: SMTP_URL, or
// .eml files under DATA_DIR/mail), one connection per message: people's emails are rare, and the
// confirmation emails' outbox and its pool stay the orders' own.
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { createMailer } from "../notifications/mailer.ts";
import { escapeHtml } from "../notifications/render-confirmation-email.ts";
import type { Realm } from "./roles.ts";

export type LinkEmail = {
  kind: "invitation" | "password_reset";
  realm: Realm;
  to: string;
  link: string;
  /** The partner's name for a partner's invitation; null for the operator's staff. */
  team: string | null;
  role: string;
};

function render(email: LinkEmail): { subject: string; text: string; html: string } {
  const where =
    email.realm === "operator" ? "the operator console" : `${email.team ?? "your team"}'s eSIM console`;
  if (email.kind === "invitation") {
    const lines = [
      `You are invited to ${where} as ${email.role}.`,
      "",
      "Choose your password here (the link works once, for 72 hours):",
      email.link,
      "",
      "If you did not expect this, ignore this email: nothing happens unless the link is used.",
    ];
    return {
      subject: `You are invited to ${where}`,
      text: lines.join("\n"),
      html: `<p>You are invited to ${escapeHtml(where)} as <strong>${escapeHtml(email.role)}</strong>.</p>
<p><a href="${escapeHtml(email.link)}">Choose your password</a> (the link works once, for 72 hours).</p>
<p>If you did not expect this, ignore this email: nothing happens unless the link is used.</p>`,
    };
  }
  const lines = [
    `Someone asked to reset the password of your account at ${where}.`,
    "",
    "Choose a new password here (the link works once, for 1 hour; using it signs you out everywhere):",
    email.link,
    "",
    "If it was not you, ignore this email: your password stays as it is.",
  ];
  return {
    subject: "Reset your password",
    text: lines.join("\n"),
    html: `<p>Someone asked to reset the password of your account at ${escapeHtml(where)}.</p>
<p><a href="${escapeHtml(email.link)}">Choose a new password</a> (the link works once, for 1 hour; using it signs you out everywhere).</p>
<p>If it was not you, ignore this email: your password stays as it is.</p>`,
  };
}

/** Sends one link email; throws when the relay refuses it or cannot be reached in time. */
export async function sendLinkEmail(
  config: Pick<Config, "smtp_url" | "mail_from" | "data_dir">,
  email: LinkEmail,
): Promise<void> {
  const mailer = createMailer({
    smtp_url: config.smtp_url,
    mail_from: config.mail_from,
    data_dir: config.data_dir,
  });
  try {
    await mailer.send({
      ...render(email),
      attachments: [],
      key: `${email.kind.replace("_", "-")}.${randomBytes(12).toString("hex")}`,
      to: email.to,
    });
  } finally {
    await mailer.close();
  }
}

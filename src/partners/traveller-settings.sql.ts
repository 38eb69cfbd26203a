// SQL of a partner's traveller-facing settings (migration 0043): its brand and its notification
// settings, one row each at most (none: the defaults). Private to src/partners/.
import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type BrandingRow = {
  partner_id: string;
  display_name: string | null;
  /** As the partner chose it (lower case); renderers get readableAccent of it. */
  accent_color: string;
  logo_png: Buffer | null;
  support_email: string | null;
  support_url: string | null;
  email_from_name: string | null;
  reply_to: string | null;
};

export async function brandingRows(db: Executor, partner_ids: readonly string[]): Promise<BrandingRow[]> {
  if (partner_ids.length === 0) return [];
  const result = await sql<BrandingRow>`
    select partner_id, display_name, accent_color, logo_png, support_email, support_url,
           email_from_name, reply_to
    from partner_branding where partner_id = any(${partner_ids}::text[])`.execute(db);
  return result.rows;
}

/** The brand's row, locked until the transaction ends (a PUT reads, merges and writes it). */
export async function lockBranding(db: Executor, partner_id: string): Promise<BrandingRow | null> {
  const result = await sql<BrandingRow>`
    select partner_id, display_name, accent_color, logo_png, support_email, support_url,
           email_from_name, reply_to
    from partner_branding where partner_id = ${partner_id} for update`.execute(db);
  return result.rows[0] ?? null;
}

export async function upsertBranding(db: Executor, row: BrandingRow): Promise<void> {
  await sql`
    insert into partner_branding (partner_id, display_name, accent_color, logo_png, support_email,
                                  support_url, email_from_name, reply_to)
    values (${row.partner_id}, ${row.display_name}, ${row.accent_color}, ${row.logo_png},
            ${row.support_email}, ${row.support_url}, ${row.email_from_name}, ${row.reply_to})
    on conflict (partner_id) do update set
      display_name = excluded.display_name, accent_color = excluded.accent_color,
      logo_png = excluded.logo_png, support_email = excluded.support_email,
      support_url = excluded.support_url, email_from_name = excluded.email_from_name,
      reply_to = excluded.reply_to, updated_at = now()`.execute(db);
}

export type NotificationSettingsRow = {
  partner_id: string;
  confirmation_email: boolean;
  traveller_usage_emails: boolean;
  top_up_url: string | null;
};

export async function notificationSettingsRows(
  db: Executor,
  partner_ids: readonly string[],
): Promise<NotificationSettingsRow[]> {
  if (partner_ids.length === 0) return [];
  const result = await sql<NotificationSettingsRow>`
    select partner_id, confirmation_email, traveller_usage_emails, top_up_url
    from partner_notification_settings where partner_id = any(${partner_ids}::text[])`.execute(db);
  return result.rows;
}

export async function lockNotificationSettings(
  db: Executor,
  partner_id: string,
): Promise<NotificationSettingsRow | null> {
  const result = await sql<NotificationSettingsRow>`
    select partner_id, confirmation_email, traveller_usage_emails, top_up_url
    from partner_notification_settings where partner_id = ${partner_id} for update`.execute(db);
  return result.rows[0] ?? null;
}

export async function upsertNotificationSettings(db: Executor, row: NotificationSettingsRow): Promise<void> {
  await sql`
    insert into partner_notification_settings (partner_id, confirmation_email, traveller_usage_emails, top_up_url)
    values (${row.partner_id}, ${row.confirmation_email}, ${row.traveller_usage_emails}, ${row.top_up_url})
    on conflict (partner_id) do update set
      confirmation_email = excluded.confirmation_email,
      traveller_usage_emails = excluded.traveller_usage_emails,
      top_up_url = excluded.top_up_url, updated_at = now()`.execute(db);
}

/**
 * The partners that turned the traveller usage emails on, at most `limit` (the notice sweep's),
 * from the first after `after` by partner_id, wrapping around to the first ones: a sweep passing
 * the last partner of its previous round reaches every partner in turn, however many there are.
 */
export async function partnersWithUsageEmails(
  db: Executor,
  after: string | null,
  limit: number,
): Promise<string[]> {
  const result = await sql<{ partner_id: string }>`
    select partner_id from partner_notification_settings where traveller_usage_emails
    order by partner_id <= ${after ?? ""}, partner_id limit ${limit}`.execute(db);
  return result.rows.map((row) => row.partner_id);
}

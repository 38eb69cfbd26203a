// A partner's traveller-facing settings (issue 35, contract "Travellers"): its brand
// (PUT/GET /v1/profile/branding) and its notification settings (PUT/GET /v1/profile/notifications),
// read, checked and written here; loadBrands/loadSenders give the renderers what they need. A PUT
// changes the fields it names and keeps the others; null clears one. Each change is audited in its
// transaction (branding.updated, notifications.updated), and a PUT that changes nothing logs nothing.
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import { isPlainAddress } from "../notifications/mime-message.ts";
import type { TravellerSender } from "../notifications/send-confirmation-emails.ts";
import type { Actor } from "../shared/actor.ts";
import { type Brand, DEFAULT_BRAND } from "../shared/brand.ts";
import { ApiError, type FieldErrorCode } from "../shared/errors.ts";
import { readableAccent } from "./accent-color.ts";
import { checkLogoPng, MAX_LOGO_BYTES } from "./png-logo.ts";
import {
  type BrandingRow,
  brandingRows,
  lockBranding,
  lockNotificationSettings,
  type NotificationSettingsRow,
  notificationSettingsRows,
  partnersWithUsageEmails,
  upsertBranding,
  upsertNotificationSettings,
} from "./traveller-settings.sql.ts";

export type BrandingFields = Omit<BrandingRow, "partner_id">;
/** What a PUT names: a field left out (undefined) keeps its value; the logo comes as base64. */
export type BrandingChange = Partial<Omit<BrandingFields, "logo_png" | "accent_color">> & {
  accent_color?: string | null;
  logo_png_base64?: string | null;
};

const MAX_URL_LENGTH = 500;
// Built from strings (a literal would hold control characters): PostgreSQL refuses NUL, and a
// name in a header or a link must hold no line break.
const CONTROL_CHARACTERS = "[\\x00-\\x1f\\x7f]";
const SPACES_OR_CONTROL_CHARACTERS = "[\\x00-\\x20\\x7f]";
const CONTROL_CHARACTER = new RegExp(CONTROL_CHARACTERS);
const SPACE_OR_CONTROL = new RegExp(SPACES_OR_CONTROL_CHARACTERS);

function defaultBranding(partner_id: string): BrandingRow {
  const { logo_png, accent_color, support_email, support_url, email_from_name, reply_to, display_name } =
    DEFAULT_BRAND;
  return {
    partner_id,
    display_name,
    accent_color,
    logo_png,
    support_email,
    support_url,
    email_from_name,
    reply_to,
  };
}

export async function getBranding(db: Kysely<Database>, partner_id: string): Promise<BrandingRow> {
  return (await brandingRows(db, [partner_id]))[0] ?? defaultBranding(partner_id);
}

export async function setBranding(
  db: Kysely<Database>,
  partner_id: string,
  change: BrandingChange,
  actor: Actor,
): Promise<BrandingRow> {
  const fields = checkBrandingChange(change);
  return db.transaction().execute(async (trx) => {
    const before = (await lockBranding(trx, partner_id)) ?? defaultBranding(partner_id);
    const after: BrandingRow = { ...before, ...fields };
    const changed = (Object.keys(fields) as (keyof BrandingFields)[]).filter(
      (name) => !sameValue(before[name], after[name]),
    );
    if (changed.length === 0) return before;
    await upsertBranding(trx, after);
    await recordAudit(trx, {
      actor,
      action: "branding.updated",
      partner_id,
      target: { type: "partner", id: partner_id },
      // The names of what changed, and the new values but the logo's bytes (its size instead).
      details: Object.fromEntries(
        changed.map((name) => [
          name,
          name === "logo_png"
            ? after.logo_png === null
              ? null
              : { bytes: after.logo_png.length }
            : after[name],
        ]),
      ),
    });
    return after;
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return a === b;
}

function invalid(field: string, message: string, code: FieldErrorCode = "invalid_format"): never {
  throw new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
}

/** The change checked field by field, in the stored form; 400 invalid_request naming the first bad one. */
function checkBrandingChange(change: BrandingChange): Partial<BrandingFields> {
  const fields: Partial<BrandingFields> = {};
  if (change.display_name !== undefined) fields.display_name = oneLine("display_name", change.display_name);
  if (change.email_from_name !== undefined) {
    fields.email_from_name = oneLine("email_from_name", change.email_from_name);
  }
  if (change.accent_color !== undefined) {
    if (change.accent_color !== null && !/^#[0-9A-Fa-f]{6}$/.test(change.accent_color)) {
      invalid("accent_color", 'must be a colour written "#RRGGBB" (six hexadecimal digits)');
    }
    fields.accent_color = change.accent_color?.toLowerCase() ?? DEFAULT_BRAND.accent_color;
  }
  if (change.support_email !== undefined)
    fields.support_email = address("support_email", change.support_email);
  if (change.reply_to !== undefined) fields.reply_to = address("reply_to", change.reply_to);
  if (change.support_url !== undefined) fields.support_url = httpsUrl("support_url", change.support_url);
  if (change.logo_png_base64 !== undefined) fields.logo_png = logo(change.logo_png_base64);
  return fields;
}

function oneLine(field: string, value: string | null): string | null {
  if (value === null) return null;
  const text = value.trim();
  if ([...text].length < 1 || [...text].length > 100 || CONTROL_CHARACTER.test(text)) {
    invalid(field, "must be 1 to 100 characters on one line, or null");
  }
  return text;
}

function address(field: string, value: string | null): string | null {
  if (value === null) return null;
  const text = value.trim();
  // Plain ASCII addresses only: they go into header fields (Reply-To) as they are.
  if (!isPlainAddress(text))
    invalid(field, "must be an email address (ASCII, like help@partner.example), or null");
  return text;
}

/** An https URL (never http: it is shown to travellers and opened from emails), or null. */
export function httpsUrl(field: string, value: string | null): string | null {
  if (value === null) return null;
  const text = value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return invalid(field, "must be an absolute https:// URL, or null");
  }
  if (url.protocol !== "https:")
    invalid(field, "must be an https:// URL (http and other schemes are refused)");
  if (url.username !== "" || url.password !== "") invalid(field, "must not carry a user name or password");
  if (text.length > MAX_URL_LENGTH || SPACE_OR_CONTROL.test(text)) {
    invalid(field, `must be at most ${MAX_URL_LENGTH} characters, without spaces`, "too_long");
  }
  return text;
}

function logo(base64: string | null): Buffer | null {
  if (base64 === null) return null;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) {
    invalid("logo_png_base64", "must be standard base64 (RFC 4648 section 4, padded), or null");
  }
  const png = Buffer.from(base64, "base64");
  if (png.length > MAX_LOGO_BYTES) {
    invalid(
      "logo_png_base64",
      `is ${png.length} bytes once decoded; a logo is at most ${MAX_LOGO_BYTES} (40 KiB)`,
    );
  }
  const check = checkLogoPng(png);
  if (!check.ok) invalid("logo_png_base64", `is refused: the file ${check.reason}`);
  return png;
}

export type NotificationSettings = Omit<NotificationSettingsRow, "partner_id">;
export type NotificationSettingsChange = Partial<NotificationSettings>;

const DEFAULT_NOTIFICATIONS: NotificationSettings = {
  confirmation_email: true,
  traveller_usage_emails: false,
  top_up_url: null,
};

export async function getNotificationSettings(
  db: Kysely<Database>,
  partner_id: string,
): Promise<NotificationSettingsRow> {
  return (await notificationSettingsRows(db, [partner_id]))[0] ?? { partner_id, ...DEFAULT_NOTIFICATIONS };
}

export async function setNotificationSettings(
  db: Kysely<Database>,
  partner_id: string,
  change: NotificationSettingsChange,
  actor: Actor,
): Promise<NotificationSettingsRow> {
  const fields: NotificationSettingsChange = { ...change };
  if (change.top_up_url !== undefined) fields.top_up_url = httpsUrl("top_up_url", change.top_up_url);
  return db.transaction().execute(async (trx) => {
    const before = (await lockNotificationSettings(trx, partner_id)) ?? {
      partner_id,
      ...DEFAULT_NOTIFICATIONS,
    };
    const after = { ...before, ...fields };
    const changed = (Object.keys(fields) as (keyof NotificationSettings)[]).filter(
      (name) => before[name] !== after[name],
    );
    if (changed.length === 0) return before;
    await upsertNotificationSettings(trx, after);
    await recordAudit(trx, {
      actor,
      action: "notifications.updated",
      partner_id,
      target: { type: "partner", id: partner_id },
      details: Object.fromEntries(changed.map((name) => [name, after[name]])),
    });
    return after;
  });
}

/** The brand a renderer uses: every field filled, the accent made readable (accent-color.ts). */
export function brandOf(row: BrandingRow | undefined): Brand {
  if (!row) return DEFAULT_BRAND;
  return {
    display_name: row.display_name,
    accent_color: readableAccent(row.accent_color),
    logo_png: row.logo_png,
    support_email: row.support_email,
    support_url: row.support_url,
    email_from_name: row.email_from_name,
    reply_to: row.reply_to,
  };
}

/** One partner's brand, for the install page and any single render. */
export async function loadBrand(db: Kysely<Database>, partner_id: string): Promise<Brand> {
  return brandOf((await brandingRows(db, [partner_id]))[0]);
}

/** The partners with traveller usage emails on, at most `limit`, from the first after `after`, wrapping. */
export function partnersWithNotices(
  db: Kysely<Database>,
  after: string | null,
  limit: number,
): Promise<string[]> {
  return partnersWithUsageEmails(db, after, limit);
}

/** Several partners' at once (an email sweep's batch): two statements, whatever the number. */
export async function loadSenders(
  db: Kysely<Database>,
  partner_ids: readonly string[],
): Promise<Map<string, TravellerSender>> {
  const unique = [...new Set(partner_ids)];
  const [brands, settings] = await Promise.all([
    brandingRows(db, unique),
    notificationSettingsRows(db, unique),
  ]);
  const brandBy = new Map(brands.map((row) => [row.partner_id, row]));
  const settingsBy = new Map(settings.map((row) => [row.partner_id, row]));
  return new Map(
    unique.map((partner_id) => {
      const row = settingsBy.get(partner_id);
      const notifications = row
        ? {
            confirmation_email: row.confirmation_email,
            traveller_usage_emails: row.traveller_usage_emails,
            top_up_url: row.top_up_url,
          }
        : DEFAULT_NOTIFICATIONS;
      return [partner_id, { brand: brandOf(brandBy.get(partner_id)), notifications }];
    }),
  );
}

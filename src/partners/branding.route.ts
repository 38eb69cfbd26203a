// GET and PUT /v1/profile/branding: the partner's brand as travellers see it (contract "Travellers").
// GET answers what the partner chose, and `accent_color_applied`: the colour emails and install
// pages use, darkened when the chosen one would leave text unreadable (accent-color.ts).
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { readableAccent } from "./accent-color.ts";
import type { BrandingRow } from "./traveller-settings.sql.ts";
import { getBranding, setBranding } from "./traveller-settings.ts";

/** A nullable field of the body, optional: left out keeps the stored value, null clears it. */
function field(schema: Parameters<typeof Type.String>[0], description: string) {
  return Type.Optional(Type.Union([Type.String(schema), Type.Null()], { description }));
}

// The schema says what it can (so a client's generator, and ours, make valid values); the use case
// checks the rest (an https URL that parses, a plain address, a sound PNG), naming the field.
const NAME = { minLength: 1, maxLength: 100, pattern: "^(?=.*\\S)[^\\x00-\\x1f\\x7f]+$" };
const ADDRESS = { format: "email", minLength: 3, maxLength: 254 };

const BrandingBody = Type.Object(
  {
    display_name: field(NAME, "Your name as travellers read it in emails and on install pages."),
    accent_color: field(
      { pattern: "^#[0-9A-Fa-f]{6}$" },
      '"#RRGGBB": buttons and links. Stored as given; null: the service\'s own (#1f5fbf).',
    ),
    support_email: field(
      ADDRESS,
      "Where travellers may write for help, shown in emails and on install pages.",
    ),
    support_url: field(
      { maxLength: 500, pattern: "^https://[^\\x00-\\x20\\x7f]+$" },
      "Your help page: an absolute https URL.",
    ),
    logo_png_base64: field(
      { maxLength: 64 * 1024 },
      "A PNG at most 40 KiB (base64 here), at most 1024 px a side, shown inline in emails (never fetched from a " +
        "URL) and on install pages. Checked whole: signature, IHDR, chunk CRCs, image data that decodes.",
    ),
    email_from_name: field(
      NAME,
      "The From display name of traveller emails (the address stays ours); null: display_name, then ours.",
    ),
    reply_to: field(ADDRESS, "The Reply-To of traveller emails: travellers' replies reach you."),
  },
  {
    additionalProperties: false,
    description: "Fields left out keep their value; null clears one (the service's own is used then).",
  },
);

export const BrandingResponse = Type.Object(
  {
    display_name: Type.Union([Type.String(), Type.Null()]),
    accent_color: Type.String({ description: "As you chose it (lower case)." }),
    accent_color_applied: Type.String({
      description:
        "What emails and install pages use: accent_color, or accent_color darkened (same hue) until white text on " +
        "it, and it on the white page, reach a contrast of 4.5:1 (WCAG 2.x relative luminance).",
    }),
    support_email: Type.Union([Type.String(), Type.Null()]),
    support_url: Type.Union([Type.String(), Type.Null()]),
    logo_png_base64: Type.Union([Type.String(), Type.Null()]),
    email_from_name: Type.Union([Type.String(), Type.Null()]),
    reply_to: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

function renderBranding(row: BrandingRow) {
  return {
    display_name: row.display_name,
    accent_color: row.accent_color,
    accent_color_applied: readableAccent(row.accent_color),
    support_email: row.support_email,
    support_url: row.support_url,
    logo_png_base64: row.logo_png === null ? null : row.logo_png.toString("base64"),
    email_from_name: row.email_from_name,
    reply_to: row.reply_to,
  };
}

export const getBrandingRoute = endpoint({
  method: "GET",
  url: "/profile/branding",
  schema: {
    operationId: "getBranding",
    summary: "Your brand, as travellers see it",
    tags: ["Travellers"],
    security: PARTNER_SECURITY,
    response: {
      200: BrandingResponse,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) => renderBranding(await getBranding(ctx.db, request.partner!.partner_id)),
});

export const setBrandingRoute = endpoint({
  method: "PUT",
  url: "/profile/branding",
  schema: {
    operationId: "setBranding",
    summary: "Set your brand for traveller emails and install pages",
    description:
      "Fields left out keep their value; null clears one. Each field is checked (400 `invalid_request` naming it, " +
      "nothing saved): a colour not `#RRGGBB`, an address that is not a plain email address, a URL that is not " +
      "https, a logo that is not a sound PNG (signature, IHDR, chunk CRCs, image data that decodes) of at most " +
      "40 KiB and 1024 px a side. A change is recorded in the audit log as `branding.updated`.",
    tags: ["Travellers"],
    security: PARTNER_SECURITY,
    body: BrandingBody,
    response: {
      200: BrandingResponse,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
      ),
    },
  },
  handler: (ctx) => async (request) =>
    renderBranding(await setBranding(ctx.db, request.partner!.partner_id, request.body, actorOf(request))),
});

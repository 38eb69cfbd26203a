// A partner's brand as travellers see it (contract "Travellers": PUT /v1/profile/branding). The
// confirmation and notice emails and the install page render with one of these; a partner that set
// nothing gets the service's own. The type sits in the shared base so that the renderers
// (notifications, the install page) and the partners' settings that fill it depend on it, not on
// each other.
export type Brand = {
  /** What the traveller reads as the sender and on the page; null: the service's own name. */
  display_name: string | null;
  /** "#RRGGBB", already adjusted by its owner so that text on it and it on white stay readable. */
  accent_color: string;
  /** A validated PNG (at most 40 KiB), shown inline, never fetched from a URL; null: no logo. */
  logo_png: Buffer | null;
  support_email: string | null;
  support_url: string | null;
  /** The From display name of traveller emails; null: display_name, then the service's. */
  email_from_name: string | null;
  reply_to: string | null;
};

/** The service's own look, for a partner that set no branding. */
export const DEFAULT_BRAND: Brand = {
  display_name: null,
  accent_color: "#1f5fbf",
  logo_png: null,
  support_email: null,
  support_url: null,
  email_from_name: null,
  reply_to: null,
};

/**
 * The Content-ID of the brand's logo in a traveller email: a renderer's HTML that shows the logo
 * refers to `cid:` this, and the sender attaches the logo as an inline part of that id.
 */
export const BRAND_LOGO_CID = "brand-logo@esim.example";

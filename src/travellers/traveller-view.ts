// What the traveller's emails and install page say alike, written once: the install steps per
// phone, the partner's brand as text (name, support links), and HTML escaping. The confirmation
// email, the notices and the page each lay these out their own way, so none can tell a traveller a
// step or a contact the others do not.
import type { Brand } from "../shared/brand.ts";
import type { Translator } from "./translate.ts";

/** The name a partner without branding goes by: the service's own, as MAIL_FROM's default says it. */
export const SERVICE_DISPLAY_NAME = "eSIM Orders";

export function brandName(brand: Brand): string {
  return brand.display_name ?? SERVICE_DISPLAY_NAME;
}

export type InstallSteps = { heading: string; note: string | null; steps: string[] };

// Android menus differ between manufacturers; the wording names the stock Android path and the
// common alternative, and says that menus vary.
export function iphoneSteps(t: Translator): InstallSteps {
  return {
    heading: t.t("iphone.heading"),
    note: null,
    steps: ["iphone.step1", "iphone.step2", "iphone.step3", "iphone.step4"].map((key) => t.t(key)),
  };
}

export function androidSteps(t: Translator): InstallSteps {
  return {
    heading: t.t("android.heading"),
    note: t.t("android.note"),
    steps: ["android.step1", "android.step2", "android.step3", "android.step4"].map((key) => t.t(key)),
  };
}

export type SupportLink = { label: string; href: string; shown: string };

/** The brand's support contacts, each as a link: none when the brand names none. */
export function supportLinks(brand: Brand, t: Translator): SupportLink[] {
  const name = brandName(brand);
  const links: SupportLink[] = [];
  if (brand.support_email !== null) {
    links.push({
      label: t.t("support.email", { brand: name }),
      href: `mailto:${brand.support_email}`,
      shown: brand.support_email,
    });
  }
  if (brand.support_url !== null) {
    links.push({
      label: t.t("support.web", { brand: name }),
      href: brand.support_url,
      shown: brand.support_url,
    });
  }
  return links;
}

export function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** The ordered-list text of steps, for plain-text bodies: "1. …" one a line. */
export function numberedSteps(steps: readonly string[]): string {
  return steps.map((step, index) => `${index + 1}. ${step}`).join("\n");
}

/** The accent colour as CSS takes it, checked: only "#RRGGBB" ever reaches a style attribute. */
export function accentColor(brand: Brand): string {
  if (!/^#[0-9A-Fa-f]{6}$/.test(brand.accent_color)) throw new Error("accent_color must be #RRGGBB");
  return brand.accent_color;
}

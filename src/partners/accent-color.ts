// The accent colour of a partner's brand, made readable (issue 35): buttons carry white text on
// the accent, and links and headings are the accent on the white page, so both need a contrast of
// at least 4.5:1 against white (WCAG 2.x, success criterion 1.4.3, normal text). A colour that
// falls short is darkened toward black, keeping its hue, by the least that reaches 4.5:1. The
// partner's own choice is stored as given; renderers get the adjusted one (load-brand.ts).

export const MIN_CONTRAST = 4.5;
const WHITE = "#ffffff";

/** WCAG 2.x relative luminance of an sRGB "#rrggbb". */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = channels(hex).map((value) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [
    number,
    number,
  ];
  return (light + 0.05) / (dark + 0.05);
}

/** The colour itself when white text on it (and it on white) reads at 4.5:1; else it darkened just enough. */
export function readableAccent(hex: string): string {
  const colour = hex.toLowerCase();
  if (contrastRatio(colour, WHITE) >= MIN_CONTRAST) return colour;
  // Scaling every channel by the same factor keeps the hue; the contrast grows as the factor falls,
  // so the largest factor (in 1/256 steps) that reaches the minimum is the least change. Black
  // (factor 0) is 21:1, so the loop always ends.
  const rgb = channels(colour);
  for (let step = 255; step >= 0; step--) {
    const candidate = toHex(rgb.map((c) => Math.floor((c * step) / 256)) as [number, number, number]);
    if (contrastRatio(candidate, WHITE) >= MIN_CONTRAST) return candidate;
  }
  return "#000000";
}

function channels(hex: string): [number, number, number] {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!match) throw new Error(`"${hex}" is not a #rrggbb colour`);
  return [Number.parseInt(match[1]!, 16), Number.parseInt(match[2]!, 16), Number.parseInt(match[3]!, 16)];
}

function toHex(rgb: [number, number, number]): string {
  return `#${rgb.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
}

// Content negotiation by the Accept header (RFC 9110 12.5.1), for routes that answer JSON or
// another type (a CSV statement, a PDF statement).

type MediaRange = { type: string; q: number; index: number };

/** The Accept header's media ranges with their q-values; at most 20 read. */
function mediaRanges(accept: string): MediaRange[] {
  return accept
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [type = "", ...params] = part.split(";");
      const q_param = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith("q="));
      const q = q_param === undefined ? 1 : Number(q_param.slice(2));
      return {
        type: type.trim().toLowerCase(),
        q: Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0,
        index,
      };
    });
}

/** How much the client wants `media`: its most specific range (exact, then any subtype, then any type). */
function preference(ranges: MediaRange[], media: string): { q: number; index: number } {
  const [kind] = media.split("/");
  for (const candidate of [media, `${kind}/*`, "*/*"]) {
    const range = ranges.find((r) => r.type === candidate);
    if (range) return range;
  }
  return { q: 0, index: Number.MAX_SAFE_INTEGER };
}

/**
 * Whether the client prefers `media` to JSON: a higher q-value, or on a tie its matching range
 * listed first. No Accept, any type, or application/json: JSON.
 */
export function prefersOverJson(accept: string | undefined, media: string): boolean {
  const ranges = mediaRanges(accept ?? "");
  const wanted = preference(ranges, media);
  const json = preference(ranges, "application/json");
  if (wanted.q === 0) return false;
  return wanted.q !== json.q ? wanted.q > json.q : wanted.index < json.index;
}

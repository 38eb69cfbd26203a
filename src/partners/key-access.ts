// What an API key may do (issue 31): its name, its scope (`full`, or `read_only`: no writes) and
// the addresses it may be used from (`allowed_ips`, CIDRs; empty = any). Checked once when the key
// is issued, whoever issues it (operator API, CLI, consoles), so every way in refuses the same
// values with the same words; the authentication hook (server/auth.ts) enforces them.
import { isIP } from "node:net";
import { Type } from "typebox";
import { ApiError, type FieldErrorCode } from "../shared/errors.ts";

export const KEY_SCOPES = ["full", "read_only"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** The database's own limit (migration 0023: `length(name) <= 100`). */
export const MAX_KEY_NAME_LENGTH = 100;
/** An allowlist names a partner's egress addresses: a few, never a routing table. */
export const MAX_ALLOWED_IPS = 20;
/** The longest CIDR text: a full IPv6 address with an embedded IPv4 one and "/128". */
const MAX_CIDR_LENGTH = 49;
const NAME_PATTERN = "^[^\\x00-\\x1f\\x7f]*$";
const NAME = new RegExp(NAME_PATTERN);

/** The body of `POST /admin/partners/{partner_id}/api-keys`; every field optional, as is the body. */
export const ApiKeyOptionsBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        maxLength: MAX_KEY_NAME_LENGTH,
        pattern: NAME_PATTERN,
        description: `What the key is for ("Production servers"), at most ${MAX_KEY_NAME_LENGTH} characters. Default: none ("").`,
      }),
    ),
    scope: Type.Optional(
      Type.Union([Type.Literal("full"), Type.Literal("read_only")], {
        description:
          "`full` (the default) or `read_only`: a read-only key may read everything, and any other method than " +
          "GET, HEAD or OPTIONS answers 403 `insufficient_scope`, changing nothing.",
      }),
    ),
    allowed_ips: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_CIDR_LENGTH }), {
        maxItems: MAX_ALLOWED_IPS,
        description:
          `The addresses the key may be used from, as CIDRs (\`203.0.113.0/24\`, \`2001:db8::/32\`; a bare address ` +
          `is one host: /32 or /128), at most ${MAX_ALLOWED_IPS}. Empty or absent: any address. A CIDR with bits set ` +
          "past its prefix (`10.0.0.1/8`) is refused: write the network (`10.0.0.0/8`). An IPv4 client reaching an " +
          "IPv6 listener (`::ffff:203.0.113.7`) matches the IPv4 CIDRs. A request from elsewhere answers 403 " +
          "`ip_not_allowed`, changing nothing.",
      }),
    ),
  },
  { additionalProperties: false },
);

/** A key's name, scope and allowlist as they are stored and shown. */
export type KeyAccess = { name: string; scope: KeyScope; allowed_ips: string[] };

export const KeyAccessFields = {
  name: Type.String({ description: 'What the key is for; "" when it was given no name.' }),
  scope: Type.Union([Type.Literal("full"), Type.Literal("read_only")]),
  allowed_ips: Type.Array(Type.String(), {
    description: "CIDRs the key may be used from; empty: any address.",
  }),
};

export type KeyAccessInput = { name?: string; scope?: string; allowed_ips?: readonly string[] };

/**
 * The options as given (by a route, the CLI or a console form), checked and normalised: the
 * name trimmed, the scope `full` unless given, each CIDR in the form PostgreSQL stores. Any
 * wrong value is 400 invalid_request naming the field (`allowed_ips.2`) and what is wrong.
 */
export function checkKeyAccess(input: KeyAccessInput): KeyAccess {
  const name = (input.name ?? "").trim();
  if (name.length > MAX_KEY_NAME_LENGTH) {
    throw invalid("name", `must be at most ${MAX_KEY_NAME_LENGTH} characters (got ${name.length})`);
  }
  if (!NAME.test(name)) throw invalid("name", "must not contain control characters");
  const scope = input.scope ?? "full";
  if (!(KEY_SCOPES as readonly string[]).includes(scope)) {
    throw invalid("scope", `must be "full" or "read_only" (got "${scope.slice(0, 40)}")`);
  }
  const given = input.allowed_ips ?? [];
  if (given.length > MAX_ALLOWED_IPS) {
    throw invalid("allowed_ips", `must have at most ${MAX_ALLOWED_IPS} entries (got ${given.length})`);
  }
  const allowed_ips = given.map((cidr, i) => {
    const checked = checkCidr(cidr.trim());
    if (typeof checked === "string") return checked;
    throw invalid(`allowed_ips.${i}`, checked.problem);
  });
  return { name, scope: scope as KeyScope, allowed_ips: [...new Set(allowed_ips)] };
}

function invalid(field: string, message: string, code: FieldErrorCode = "invalid_format"): ApiError {
  return new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
}

/**
 * A CIDR (or a bare address: one host) in PostgreSQL's `cidr` text form, or what is wrong with
 * it. Host bits set past the prefix are refused rather than silently cleared: `10.0.0.1/8` more
 * likely means a typo (`10.0.0.1/32`?) than the whole of 10/8, and the answer says both.
 */
export function checkCidr(text: string): string | { problem: string } {
  const shown = `"${text.slice(0, MAX_CIDR_LENGTH + 2)}"`;
  if (text.length === 0 || text.length > MAX_CIDR_LENGTH) {
    return { problem: `${shown} is not a CIDR (such as 203.0.113.0/24 or 2001:db8::/32)` };
  }
  const slash = text.indexOf("/");
  const address = slash === -1 ? text : text.slice(0, slash);
  // A zone (fe80::1%eth0) names an interface, not an address PostgreSQL's cidr can hold.
  const family = (address.includes("%") ? 0 : isIP(address)) as 0 | 4 | 6;
  if (family === 0) {
    return { problem: `${shown} is not a CIDR: "${address}" is not an IPv4 or IPv6 address` };
  }
  const bits = family === 4 ? 32 : 128;
  const prefix_text = slash === -1 ? String(bits) : text.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefix_text) ? Number(prefix_text) : Number.NaN;
  if (!(prefix >= 0 && prefix <= bits)) {
    return { problem: `${shown} has a prefix length that is not a whole number from 0 to ${bits}` };
  }
  const bytes = addressBytes(address, family);
  const network = bytes.map((byte, i) => {
    const kept = Math.min(8, Math.max(0, prefix - i * 8));
    return byte & ((0xff << (8 - kept)) & 0xff);
  });
  if (network.some((byte, i) => byte !== bytes[i])) {
    const net = `${formatAddress(network, family)}/${prefix}`;
    return {
      problem: `${shown} has bits set past its /${prefix} prefix: write the network ${net}, or ${address}/${bits} for that one address`,
    };
  }
  return `${family === 4 ? address : formatAddress(bytes, 6)}/${prefix}`;
}

/** The bytes of an address `isIP` accepted (4 or 16). */
function addressBytes(address: string, family: 4 | 6): number[] {
  if (family === 4) return address.split(".").map(Number);
  let text = address.toLowerCase();
  // An embedded dotted quad (::ffff:10.0.0.1) is the last two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const [head = "", tail] = text.split("::");
  const first = groups(head);
  const last = tail === undefined ? [] : groups(tail);
  const all = [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
  return all.flatMap((group) => [group >> 8, group & 0xff]);
}

/** IPv4 dotted; IPv6 as RFC 5952 writes it (PostgreSQL's form): lower case, the longest zero run as "::". */
function formatAddress(bytes: number[], family: 4 | 6): string {
  if (family === 4) return bytes.join(".");
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!);
  // An IPv4-mapped address keeps its dotted quad, as PostgreSQL writes it.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${bytes.slice(12).join(".")}`;
  }
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start === -1) return hex.join(":");
  const before = hex.slice(0, best.start).join(":");
  const after = hex.slice(best.start + best.length).join(":");
  return `${before}::${after}`;
}

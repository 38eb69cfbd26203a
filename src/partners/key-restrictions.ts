// What authentication enforces of a key beyond its being valid (issue 31), in the API's hook
// (server/auth.ts): a read-only
// key writes nothing (403 insufficient_scope) and a key with an allowlist is refused from any
// other address (403 ip_not_allowed). Built once per key when it is looked up and kept in the
// per-key cache beside its partner, so a cached request pays no query for them. A key with
// neither restriction carries none (null) and pays one comparison; a read-only key's check is a
// string comparison; an allowlisted key's is one BlockList.check (which makes a SocketAddress of
// the request's address: a small allocation, on those keys' requests only).
// A suspended partner's keys (issue 32) carry the same kind of restriction: they may read, and any
// write is refused (403 partner_suspended) but those that only take access away
// (suspension-exemptions.ts: deleting a webhook endpoint). The partner's standing is read with the key and cached
// with it; a change of standing NOTIFYs every process, which drops the partner's keys at once.
import { BlockList } from "node:net";
import { ApiError } from "../shared/errors.ts";
import type { KeyScope } from "./key-access.ts";
import { suspensionExemption } from "./suspension-exemptions.ts";

export type KeyRestrictions = {
  read_only: boolean;
  /** The key's partner is suspended: reads only, whatever the key's scope. */
  suspended: boolean;
  /** The allowlist as a BlockList (node:net: subnet matching, IPv4-mapped IPv6 included); null: any address. */
  allowed: BlockList | null;
};

/** Null when the key may do anything from anywhere: the common case costs nothing per request. */
export function keyRestrictions(
  scope: KeyScope,
  allowed_ips: readonly string[],
  suspended = false,
): KeyRestrictions | null {
  const read_only = scope === "read_only";
  if (!read_only && !suspended && allowed_ips.length === 0) return null;
  return { read_only, suspended, allowed: allowed_ips.length === 0 ? null : blockListOf(allowed_ips) };
}

function blockListOf(allowed_ips: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of allowed_ips) {
    // As PostgreSQL writes a cidr: always "address/prefix".
    const [address = "", prefix = ""] = cidr.split("/");
    list.addSubnet(address, Number(prefix), address.includes(":") ? "ipv6" : "ipv4");
  }
  return list;
}

export type KeyRefusal = "ip_not_allowed" | "insufficient_scope" | "partner_suspended";

/**
 * Why this request may not use the key, or null. The address first: a stranger holding a stolen
 * key learns nothing about it (not even its scope). `ip` is request.ip, TRUSTED_PROXIES applied;
 * an IPv4 client on an IPv6 listener (`::ffff:a.b.c.d`) matches the IPv4 CIDRs (BlockList does).
 * `url` is the matched route as registered (request.routeOptions.url; undefined when none matched).
 */
export function keyRefusal(
  restrictions: KeyRestrictions,
  method: string,
  url: string | undefined,
  ip: string,
): KeyRefusal | null {
  if (restrictions.allowed !== null && !restrictions.allowed.check(ip, ip.includes(":") ? "ipv6" : "ipv4")) {
    return "ip_not_allowed";
  }
  const write = method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
  if (restrictions.read_only && write) return "insufficient_scope";
  if (restrictions.suspended && write && suspensionExemption(method, url) !== true)
    return "partner_suspended";
  return null;
}

export function keyRefusalError(refusal: KeyRefusal, ip: string): ApiError {
  // The address as seen (an address, or whatever a trusted proxy forwarded): shown, never long.
  const seen = ip.slice(0, 64);
  if (refusal === "partner_suspended") {
    return new ApiError(
      "partner_suspended",
      "Your account is suspended by the operator: you may read, but nothing can be changed until it is " +
        "reactivated. Nothing was changed; the console says why.",
    );
  }
  return refusal === "ip_not_allowed"
    ? new ApiError(
        "ip_not_allowed",
        `This API key may not be used from ${seen}: its allowed_ips do not include this address.`,
      )
    : new ApiError(
        "insufficient_scope",
        "This API key is read_only: it may only read (GET). Nothing was changed; use a full key to write.",
      );
}

// The bucket of a client address, shared by every per-address limit (the server's failure budgets,
// the console's sign-in throttle in PostgreSQL): one IPv6 /64 is one client.
import { isIP } from "node:net";

export const UNPARSEABLE_ADDRESS = "unparseable";

/**
 * The bucket of a client address. An IPv6 client usually holds a whole /64, so the /64 is the
 * client: per single address, it would have 2^64 budgets. Behind a trusted proxy the address comes
 * from X-Forwarded-For, which may hold anything (a proxy that passes the client's header on as it
 * is): whatever is not an IP address shares one bucket, so no bucket's name is longer than an
 * address and junk in the header cannot make new budgets.
 */
export function addressKey(ip: string): string {
  if (isIP(ip) === 0) return UNPARSEABLE_ADDRESS;
  if (!ip.includes(":") || ip.startsWith("::ffff:")) return ip;
  const [head = "", tail = ""] = ip.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === "" ? [] : tail.split(":");
  const groups = ip.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups.slice(0, 4).join(":")}::/64`;
}

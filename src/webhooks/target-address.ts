// Which addresses a webhook may reach (contract "Webhooks", Targets): public unicast only, unless
// WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. Checked on the address actually connected: the HTTP client's
// DNS lookup is replaced by `guardedLookup`, which refuses a name that resolves to any non-public
// address, so what is checked is what the socket connects to, at every attempt (DNS can change).
// IP literals never reach a lookup and are checked by `refusedAddress` before connecting.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

// biome-ignore format: one range per line, with its name
const NON_PUBLIC_V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8],        // "this network", unspecified
  ["10.0.0.0", 8],       // private
  ["100.64.0.0", 10],    // carrier-grade NAT
  ["127.0.0.0", 8],      // loopback
  ["169.254.0.0", 16],   // link-local (cloud metadata lives here)
  ["172.16.0.0", 12],    // private
  ["192.0.0.0", 24],     // IETF protocol assignments
  ["192.0.2.0", 24],     // documentation
  ["192.88.99.0", 24],   // 6to4 relay anycast
  ["192.168.0.0", 16],   // private
  ["198.18.0.0", 15],    // benchmarking
  ["198.51.100.0", 24],  // documentation
  ["203.0.113.0", 24],   // documentation
  ["224.0.0.0", 4],      // multicast
  ["240.0.0.0", 4],      // reserved, broadcast
];

// biome-ignore format: one range per line, with its name
const NON_PUBLIC_V6: ReadonlyArray<[string, number]> = [
  ["::", 96],            // unspecified, loopback, IPv4-compatible
  ["::ffff:0:0", 96],    // IPv4-mapped: would reach an IPv4 address behind an IPv6 face
  ["64:ff9b::", 96],     // NAT64
  ["64:ff9b:1::", 48],   // local-use NAT64
  ["100::", 64],         // discard
  ["2001::", 23],        // IETF protocol assignments (Teredo included)
  ["2001:db8::", 32],    // documentation
  ["2002::", 16],        // 6to4: embeds an IPv4 address
  ["3fff::", 20],        // documentation (RFC 9637)
  ["fc00::", 7],         // unique local
  ["fe80::", 10],        // link-local
  ["fec0::", 10],        // site-local (deprecated)
  ["ff00::", 8],         // multicast
];

// Two lists: in one BlockList, Node matches IPv4 addresses against IPv6 rules through their mapped
// form, and ::ffff:0:0/96 would then refuse every IPv4 address.
const nonPublicV4 = new BlockList();
for (const [network, prefix] of NON_PUBLIC_V4) nonPublicV4.addSubnet(network, prefix, "ipv4");
const nonPublicV6 = new BlockList();
for (const [network, prefix] of NON_PUBLIC_V6) nonPublicV6.addSubnet(network, prefix, "ipv6");
/** Global unicast (RFC 4291): everything outside it is reserved, special or routed only privately (5f00::/16). */
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet("2000::", 3, "ipv6");

/** True for a public unicast IPv4 or IPv6 address; false for anything else, unparseable included. */
export function isPublicAddress(address: string): boolean {
  const bare = address.split("%")[0]!; // a zone id (fe80::1%eth0) is link-local anyway
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 4) return !nonPublicV4.check(bare, "ipv4");
  return globalUnicastV6.check(bare, "ipv6") && !nonPublicV6.check(bare, "ipv6");
}

export class RefusedTarget extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedTarget";
  }
}

/** The host of a URL as an IP literal (brackets removed), or null for a name. */
export function ipLiteral(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return isIP(host) === 0 ? null : host;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http/https: resolves like the default one, then refuses the connection when
 * any resolved address is not public (a name mixing public and private addresses is refused whole).
 */
export function guardedLookup(allow_private: boolean) {
  return (hostname: string, options: { family?: number; all?: boolean }, callback: LookupCallback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((entry) => !isPublicAddress(entry.address));
      if (!allow_private && refused) {
        return callback(
          new RefusedTarget(`${hostname} resolves to ${refused.address}, not a public address`),
          [],
        );
      }
      if (addresses.length === 0) return callback(new RefusedTarget(`${hostname} has no address`), []);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Resolves a name once through the guarded lookup: what creation checks before accepting a URL. */
export function checkResolves(hostname: string, allow_private: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    guardedLookup(allow_private)(hostname, { all: true }, (error) => (error ? reject(error) : resolve()));
  });
}

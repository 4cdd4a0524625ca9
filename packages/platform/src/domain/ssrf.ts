// Webhook address rules: https in production, http only for loopback and *.localhost in
// development; in production no address that resolves to a private, loopback, link-local or
// otherwise non-public IP, so a subscription cannot make the platform call into its own network.
import { isIP } from 'node:net';

// IPv4 blocks that are not public unicast: the special-purpose ones that are not globally
// reachable, multicast and the reserved block. Everything else is public.
const IPV4_NON_PUBLIC: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", with the unspecified address
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT, shared by the ISP's customers
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, where cloud metadata services answer
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast, withdrawn
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with the broadcast address
];

function ipv4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const IPV4_RANGES = IPV4_NON_PUBLIC.map(([net, prefix]) => {
  const first = ipv4Number(net);
  return { first, last: first + 2 ** (32 - prefix) - 1 };
});

function isNonPublicIpv4(n: number): boolean {
  return IPV4_RANGES.some((r) => n >= r.first && n <= r.last);
}

/** The eight 16-bit groups of an IPv6 address that `isIP` accepted (a zone is dropped). */
function ipv6Groups(ip: string): number[] {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4Number(tail);
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 0x10000).toString(16)}:${(v4 % 0x10000).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const before = head === '' ? [] : head.split(':');
  const after = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? [] : new Array<string>(8 - before.length - after.length).fill('0');
  return [...before, ...zeros, ...after].map((group) => Number.parseInt(group, 16));
}

function isNonPublicIpv6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embeddedIpv4 = g6 * 0x10000 + g7;
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) reach the IPv4 address they carry,
  // so they are exactly as public as that address.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return isNonPublicIpv4(embeddedIpv4);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isNonPublicIpv4(embeddedIpv4);
  // Only 2000::/3 is global unicast. That leaves out the unspecified and loopback addresses, the
  // deprecated IPv4-compatible form, local-use NAT64, discard-only, unique local, link-local,
  // site-local and multicast.
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && g1 < 0x200) return true; // IETF protocol assignments, with Teredo and benchmarking
  if (g0 === 0x2001 && g1 === 0xdb8) return true; // documentation
  if (g0 === 0x2002) return true; // 6to4, withdrawn; it tunnels to an IPv4 address of any kind
  if (g0 === 0x3fff && g1 < 0x1000) return true; // documentation
  return false;
}

/**
 * Whether an IP literal is not a public unicast address (anything that is not an IP literal
 * counts as not public). IPv4-mapped and NAT64 IPv6 addresses are judged by the IPv4 address
 * they carry.
 */
export function isNonPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return isNonPublicIpv4(ipv4Number(ip));
  if (family === 6) return isNonPublicIpv6(ipv6Groups(ip));
  return true;
}

export function isLocalHostname(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Static checks of a webhook address; returns the reason it is refused, or undefined. */
export function checkWebhookAddress(address: unknown, mode: 'development' | 'production'): string | undefined {
  if (typeof address !== 'string' || address.length === 0) return 'is required';
  if (address.length > 2000) return 'must be at most 2000 characters';
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.hash) return 'must not contain a fragment';
  const local = isLocalHostname(url.hostname);
  if (url.protocol === 'http:' && (mode === 'production' || !local))
    return 'must use https (http is allowed only for localhost in development)';
  if (mode === 'production') {
    if (local) return 'must not point at this machine';
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && isNonPublicAddress(literal)) return 'must not point at a private, loopback or link-local address';
  }
  return undefined;
}

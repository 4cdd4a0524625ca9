// Webhook address rules: https in production, http only for loopback and *.localhost in
// development; in production no address that resolves to a private, loopback, link-local or
// otherwise non-public IP, so a subscription cannot make the platform call into its own network.
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Whether an IP literal is not a public unicast address. IPv4-mapped IPv6 is judged as IPv4. */
export function isNonPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    return blocked.check(ip, 'ipv6');
  }
  return blocked.check(ip, 'ipv4');
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

// `--trust-proxy`: which peers may speak for a client through X-Forwarded-For and
// X-Forwarded-Proto. Only those listed are believed; anyone else could write any address into the
// header and dodge the per-address login throttle, so an empty list (the default) believes nobody.
import { isIP } from 'node:net';
import { ConfigError } from '../domain/errors.ts';

/** At most this many entries; a longer list is almost certainly a mistake (and costs on every request). */
const MAX_ENTRIES = 64;

/**
 * Parses a comma-separated list of IP addresses and CIDR ranges (`10.0.0.5`, `10.0.0.0/8`, `::1`,
 * `fd00::/8`) into the list the HTTP server trusts; blank or absent means none. Each entry is
 * checked, and the first bad one is named.
 */
export function parseTrustProxy(value: string | undefined): readonly string[] {
  if (value === undefined || value.trim() === '') return [];
  const entries = value.split(',').map((e) => e.trim());
  if (entries.length > MAX_ENTRIES)
    throw new ConfigError(`--trust-proxy: at most ${MAX_ENTRIES} addresses or ranges, got ${entries.length}`);
  return entries.map((entry, i) => {
    if (entry === '')
      throw new ConfigError(`--trust-proxy: entry ${i + 1} is empty; expected IP addresses or CIDR ranges separated by commas`);
    const problem = entryProblem(entry);
    if (problem) throw new ConfigError(`--trust-proxy: "${entry.slice(0, 60)}" ${problem}`);
    return entry.toLowerCase();
  });
}

function entryProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (address.includes('%')) return 'has a zone index (%…); name the address without it';
  if (family === 0) {
    const bracketed = /^\[.*\]$/.test(address) ? ' (write IPv6 addresses without brackets)' : '';
    return `is not an IP address or CIDR range such as 10.0.0.0/8 or fd00::/8${bracketed}`;
  }
  if (slash === -1) return undefined;
  const prefix = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `has a bad prefix length: expected 0 to ${max}`;
  return undefined;
}

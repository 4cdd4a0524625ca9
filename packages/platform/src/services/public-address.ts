// Whether a webhook address's host resolves to public addresses only: production refuses to send
// to the inside of its own network. Checked when a subscription is made and again before every
// attempt (DNS answers can change in between).
import { lookup } from 'node:dns/promises';
import { isNonPublicAddress } from '../domain/ssrf.ts';

/** Every address a hostname resolves to. */
export type Resolver = (hostname: string) => Promise<string[]>;

export async function resolveAll(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
}

/** What is wrong with the address's host: it does not resolve, or it resolves to a non-public address. */
export async function hostProblem(address: string, resolve: Resolver = resolveAll): Promise<'unresolvable' | 'non-public' | undefined> {
  // URL keeps the brackets of an IPv6 literal; the resolver wants the bare address.
  const host = new URL(address).hostname.replace(/^\[|\]$/g, '');
  try {
    const ips = await resolve(host);
    if (ips.length === 0) return 'unresolvable';
    return ips.some((ip) => isNonPublicAddress(ip)) ? 'non-public' : undefined;
  } catch {
    return 'unresolvable';
  }
}

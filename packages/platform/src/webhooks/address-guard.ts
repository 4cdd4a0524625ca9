// Production refuses to send to an address that is not on the public internet. The address rules
// were checked when the subscription was made, but they are checked again before every attempt
// because the rules may have tightened since, and the name is resolved again because DNS answers
// can change after the check.
import { lookup } from 'node:dns/promises';
import type { Config } from '../config.ts';
import { checkWebhookAddress, isNonPublicAddress } from '../domain/ssrf.ts';

/** Every address a hostname resolves to. */
export type Resolver = (hostname: string) => Promise<string[]>;

export async function resolveAll(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
}

export class AddressGuard {
  constructor(
    private readonly mode: Config['mode'],
    private readonly resolve: Resolver = resolveAll,
  ) {}

  /** Why the address must not be sent to (completing "the address …"), or undefined when it may. */
  async refusal(address: string): Promise<string | undefined> {
    const problem = checkWebhookAddress(address, this.mode);
    if (problem || this.mode !== 'production') return problem;
    // URL keeps the brackets of an IPv6 literal; the resolver wants the bare address.
    const host = new URL(address).hostname.replace(/^\[|\]$/g, '');
    try {
      const ips = await this.resolve(host);
      if (ips.length === 0) return 'could not be resolved';
      if (ips.some((ip) => isNonPublicAddress(ip))) return 'resolves to a private, loopback or link-local address';
    } catch {
      return 'could not be resolved';
    }
    return undefined;
  }
}

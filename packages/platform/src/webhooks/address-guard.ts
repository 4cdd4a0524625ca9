// Production refuses to send to an address that is not on the public internet. The address rules
// were checked when the subscription was made, but they are checked again before every attempt
// because the rules may have tightened since, and the name is resolved again because DNS answers
// can change after the check.
import type { Config } from '../config.ts';
import { checkWebhookAddress } from '../domain/ssrf.ts';
import { hostProblem, type Resolver, resolveAll } from '../services/public-address.ts';

export type { Resolver };

/** Rule verdicts kept; the cache is emptied whole when it grows past this. */
const MAX_VERDICTS = 10_000;

export class AddressGuard {
  /** The rules' verdict per address: they depend on the address and the mode alone. */
  private readonly verdicts = new Map<string, string | undefined>();

  constructor(
    private readonly mode: Config['mode'],
    private readonly resolve: Resolver = resolveAll,
  ) {}

  /** Why the address must not be sent to (completing "the address …"), or undefined when it may. */
  async refusal(address: string): Promise<string | undefined> {
    const problem = this.ruleProblem(address);
    if (problem || this.mode !== 'production') return problem;
    const host = await hostProblem(address, this.resolve);
    if (host === 'unresolvable') return 'could not be resolved';
    if (host === 'non-public') return 'resolves to a private, loopback or link-local address';
    return undefined;
  }

  private ruleProblem(address: string): string | undefined {
    if (this.verdicts.has(address)) return this.verdicts.get(address);
    const problem = checkWebhookAddress(address, this.mode);
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
    this.verdicts.set(address, problem);
    return problem;
  }
}

// The rules of an app's privacy webhook address: the same as a subscription's (domain/ssrf.ts),
// since the platform calls it the same way.
import type { Config } from '../config.ts';
import { checkWebhookAddress } from '../domain/ssrf.ts';
import { resolvesToPublic } from './webhook-subscriptions.ts';

/** What is wrong with the address, checked without the network; undefined when nothing is. */
export function checkPrivacyWebhookUrl(value: string, mode: Config['mode']): string | undefined {
  return checkWebhookAddress(value, mode);
}

/** The static checks, then in production the address must resolve to public addresses only. */
export async function privacyUrlProblem(value: string, mode: Config['mode']): Promise<string | undefined> {
  return checkPrivacyWebhookUrl(value, mode) ?? (mode === 'production' ? await resolvesToPublic(value) : undefined);
}

// The token endpoint's limits: grants per client in a store, and per store over all its clients,
// as leaky buckets of the platform's rate limiter (in memory, or shared by every node through
// Redis).
//
// Only grants of an authenticated client are counted. Keyed by a client_id that anyone can send,
// a flood of requests with a wrong secret would spend a real client's budget and lock it out. The
// grant authenticates the client again itself, in the statement that changes anything, so to keep
// that one statement the check here costs a lookup only the first time this node sees a pair of
// credentials: pairs that authenticated are remembered for a while, as a keyed hash. A remembered
// pair that no longer authenticates (a secret rotated out, an app deleted) is refused by the grant,
// which then gives its drops back and has the pair forgotten.
import { createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { BucketLimit } from '../domain/leaky-bucket.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** Which limit refused a grant. */
export type GrantLimitName = 'per_client' | 'per_store';

export type GrantAdmission =
  | {
      allowed: true;
      /** Takes the grant's drops back out of its buckets: the grant did nothing after all. */
      release(): Promise<void>;
    }
  | { allowed: false; limit: GrantLimitName; retryAfterSeconds: number };

/** The authentication of a client by its id and secret; throws `InvalidClient` when it fails. */
export interface ClientAuthenticator {
  authenticateClient(clientId: string, clientSecret: string): Promise<unknown>;
}

/** How long credentials that authenticated are taken as authenticated without a lookup. */
const REMEMBERED_FOR_MS = 5 * 60_000;
/** Pairs of credentials remembered at most; the least recently used goes first. */
const REMEMBERED_AT_MOST = 10_000;

export class GrantLimits {
  /** Keyed hash of (client_id, secret) → when it last authenticated. */
  private readonly remembered = new Map<string, number>();
  /** Known to this process alone: the hashes are worth nothing outside it. */
  private readonly hashKey = randomBytes(32);

  constructor(
    private readonly limiter: RateLimiter,
    private readonly limits: Config['tokenRateLimit'],
    private readonly clients: ClientAuthenticator,
    private readonly clock: Clock,
  ) {}

  /** Whether any limit is on. */
  static enabled(limits: Config['tokenRateLimit']): boolean {
    return limits.client !== 'off' || limits.store !== 'off';
  }

  /**
   * Authenticates the client (refusing with `InvalidClient` when that fails, counting nothing),
   * then counts one grant in each bucket. Refused by a bucket, it gives back what it had taken:
   * a refusal leaves every bucket as it found it.
   */
  async admit(storeName: string, clientId: string, clientSecret: string): Promise<GrantAdmission> {
    await this.authenticated(clientId, clientSecret);
    const taken: [string, BucketLimit][] = [];
    const release = async () => {
      for (const [key, limit] of taken) await this.limiter.giveBack(key, limit);
    };
    for (const [name, key, limit] of this.buckets(storeName, clientId)) {
      const decision = await this.limiter.take(key, limit);
      if (!decision.allowed) {
        await release();
        return { allowed: false, limit: name, retryAfterSeconds: decision.retryAfterSeconds };
      }
      taken.push([key, limit]);
    }
    return { allowed: true, release };
  }

  /** Closes the limiter (a no-op when the Admin API, sharing it, closed it first). */
  close(): Promise<void> {
    return this.limiter.close();
  }

  /** Forgets a pair of credentials that the grant refused: the next request looks the client up again. */
  forget(clientId: string, clientSecret: string): void {
    this.remembered.delete(this.fingerprint(clientId, clientSecret));
  }

  private async authenticated(clientId: string, clientSecret: string): Promise<void> {
    const key = this.fingerprint(clientId, clientSecret);
    const now = this.clock();
    const at = this.remembered.get(key);
    this.remembered.delete(key);
    if (at === undefined || now - at > REMEMBERED_FOR_MS) {
      await this.clients.authenticateClient(clientId, clientSecret);
      this.remembered.delete(key);
      this.remembered.set(key, now);
    } else this.remembered.set(key, at);
    if (this.remembered.size > REMEMBERED_AT_MOST) this.remembered.delete(this.remembered.keys().next().value!);
  }

  /** The buckets of a grant, the client's first; a store is named by its name, unique and never changed. */
  private buckets(storeName: string, clientId: string): [GrantLimitName, string, BucketLimit][] {
    const out: [GrantLimitName, string, BucketLimit][] = [];
    if (this.limits.client !== 'off') out.push(['per_client', `grant:${storeName}:${clientId}`, this.limits.client]);
    if (this.limits.store !== 'off') out.push(['per_store', `grants:${storeName}`, this.limits.store]);
    return out;
  }

  private fingerprint(clientId: string, clientSecret: string): string {
    return createHmac('sha256', this.hashKey).update(clientId).update('\0').update(clientSecret).digest('base64');
  }
}

// Secrets shown once after a POST: the POST stores the secret sealed with the master key, bound to
// the browser session, and redirects (303) to a page that takes it out of the database in the same
// statement that reads it. Reloading that page, or opening it from another session, shows nothing.
// Unread reveals expire after a few minutes.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import { hashToken } from '../domain/tokens.ts';
import type { RevealRepository } from '../storage/ports/reveals.ts';
import type { Sealer } from './master-keys.ts';

export const REVEAL_TTL_MS = 5 * 60_000;

export class OneTimeReveals {
  constructor(
    private readonly reveals: RevealRepository,
    private readonly box: Sealer,
    private readonly clock: Clock,
  ) {}

  /** Stores `payload` for `sessionId`; returns the reveal id to put in the redirect URL. */
  async put(sessionId: string, payload: Record<string, string>): Promise<string> {
    const id = randomBytes(18).toString('base64url');
    const now = this.clock();
    await this.reveals.put({
      idHash: hashToken(id),
      sessionHash: hashToken(sessionId),
      payloadEnc: await this.box.seal(JSON.stringify(payload)),
      expiresAt: now + REVEAL_TTL_MS,
      now,
    });
    return id;
  }

  /** The payload, exactly once, to the session that stored it; undefined afterwards. */
  async take(sessionId: string, id: unknown): Promise<Record<string, string> | undefined> {
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{24}$/.test(id)) return undefined;
    const row = await this.reveals.take(hashToken(id), hashToken(sessionId));
    if (!row || row.expires_at <= this.clock()) return undefined;
    return JSON.parse(this.box.open(row.payload_enc)) as Record<string, string>;
  }
}

// Secrets shown once after a POST (issue 5): the POST stores the secret sealed with the master key,
// bound to the browser session, and redirects (303) to a page that takes it out of the database in
// the same statement that reads it. Reloading that page, or opening it from another session, shows
// nothing. Unread reveals expire after a few minutes.
import { randomBytes } from 'node:crypto';
import type { SecretBox } from '../domain/secret-box.ts';
import { hashToken } from '../domain/tokens.ts';
import type { Db } from '../storage/db.ts';
import type { Clock } from './clock.ts';

export const REVEAL_TTL_MS = 5 * 60_000;

export class OneTimeReveals {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** Stores `payload` for `sessionId`; returns the reveal id to put in the redirect URL. */
  async put(sessionId: string, payload: Record<string, string>): Promise<string> {
    const id = randomBytes(18).toString('base64url');
    const now = this.clock();
    await this.db.kysely.deleteFrom('one_time_reveals').where('expires_at', '<', now).execute();
    await this.db.kysely
      .insertInto('one_time_reveals')
      .values({ id_hash: hashToken(id), session_hash: hashToken(sessionId), payload_enc: this.box.seal(JSON.stringify(payload)), expires_at: now + REVEAL_TTL_MS })
      .execute();
    return id;
  }

  /** The payload, exactly once, to the session that stored it; undefined afterwards. */
  async take(sessionId: string, id: unknown): Promise<Record<string, string> | undefined> {
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{24}$/.test(id)) return undefined;
    const row = await this.db.kysely
      .deleteFrom('one_time_reveals')
      .where('id_hash', '=', hashToken(id))
      .where('session_hash', '=', hashToken(sessionId))
      .returning(['payload_enc', 'expires_at'])
      .executeTakeFirst();
    if (!row || Number(row.expires_at) <= this.clock()) return undefined;
    return JSON.parse(this.box.open(row.payload_enc)) as Record<string, string>;
  }
}

// Secrets waiting, sealed, to be shown once to the browser session that created them.
import type { RevealRepository } from '../ports/reveals.ts';
import type { Executor } from './executor.ts';

export class SqlRevealRepository implements RevealRepository {
  constructor(private readonly x: Executor) {}

  async put(input: { idHash: string; sessionHash: string; payloadEnc: string; expiresAt: number; now: number }): Promise<void> {
    await this.x.k.deleteFrom('one_time_reveals').where('expires_at', '<', input.now).execute();
    await this.x.k
      .insertInto('one_time_reveals')
      .values({ id_hash: input.idHash, session_hash: input.sessionHash, payload_enc: input.payloadEnc, expires_at: input.expiresAt })
      .execute();
  }

  async take(idHash: string, sessionHash: string): Promise<{ payload_enc: string; expires_at: number } | undefined> {
    const row = await this.x.k
      .deleteFrom('one_time_reveals')
      .where('id_hash', '=', idHash)
      .where('session_hash', '=', sessionHash)
      .returning(['payload_enc', 'expires_at'])
      .executeTakeFirst();
    return row && { payload_enc: row.payload_enc, expires_at: Number(row.expires_at) };
  }
}

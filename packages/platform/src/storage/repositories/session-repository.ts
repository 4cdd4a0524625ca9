// Browser sessions of merchants and partners (server-side records; the cookie holds only an id).
import type { WebSessionRow } from '../ports/rows.ts';
import type { SessionRepository } from '../ports/sessions.ts';
import type { Executor } from './executor.ts';

export class SqlSessionRepository implements SessionRepository {
  constructor(private readonly x: Executor) {}

  async insertSession(input: {
    idHash: string;
    kind: 'merchant' | 'partner';
    subjectId: number;
    storeId: number | null;
    expiresAt: number;
    now: number;
  }): Promise<void> {
    await this.x.k
      .insertInto('web_sessions')
      .values({
        id_hash: input.idHash,
        kind: input.kind,
        subject_id: input.subjectId,
        store_id: input.storeId,
        expires_at: input.expiresAt,
        created_at: input.now,
      })
      .execute();
  }

  findSession(idHash: string): Promise<WebSessionRow | undefined> {
    return this.x.k
      .selectFrom('web_sessions')
      .select(['kind', 'subject_id', 'store_id', 'expires_at'])
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.x.k.deleteFrom('web_sessions').where('id_hash', '=', idHash).execute();
  }
}

// The port on signed-in sessions of the store admin and the partner dashboard, kept by the hash of their id.
import type { WebSessionRow } from './rows.ts';

export interface SessionRepository {
  insertSession(input: {
    idHash: string;
    kind: 'merchant' | 'partner';
    subjectId: number;
    storeId: number | null;
    expiresAt: number;
    now: number;
  }): Promise<void>;
  findSession(idHash: string): Promise<WebSessionRow | undefined>;
  deleteSession(idHash: string): Promise<void>;
}

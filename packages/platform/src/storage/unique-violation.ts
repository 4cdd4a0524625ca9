// How each database reports a write refused by a unique key, turned into the one error the services
// understand. The codes: better-sqlite3 `SQLITE_CONSTRAINT_UNIQUE`, PostgreSQL SQLSTATE 23505.
import { DuplicateRecordError } from '../domain/errors.ts';

export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false;
  return err.code === 'SQLITE_CONSTRAINT_UNIQUE' || err.code === '23505';
}

/** Runs `write`; a unique-key violation comes out as DuplicateRecordError naming `record`. */
export async function refusingDuplicates<T>(record: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateRecordError(record);
    throw err;
  }
}

// Opening the configured database for a command; migrations run first so every command works on
// a fresh file.
import { migrateToLatest, openDatabase, parseDatabase, type Db } from '@storegate/platform';

export async function withDatabase<T>(database: string | undefined, fn: (db: Db) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const db = openDatabase(parseDatabase(database));
  try {
    if (options.migrate !== false) await migrateToLatest(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

// What a dated migration is handed besides the connection: which database it runs on, told by the
// open database handle, so a migration never guesses it from the driver's class names.
import type { Migration } from 'kysely';

export type MigrationDialect = 'sqlite' | 'postgres';

/** A dated migration: `up` may shape its statements by dialect; `down` (tests only) needs no dialect. */
export interface DialectMigration {
  up(db: Parameters<Migration['up']>[0], dialect: MigrationDialect): Promise<void>;
  down?: Migration['down'];
}

// Runs the dated migrations in order (Kysely's Migrator keeps its own bookkeeping tables).
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './db.ts';
import * as initial from './migrations/2026-11-22T00-initial.ts';

const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T00-initial': initial,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider: new StaticProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

// The databases a storage contract runs on: SQLite in memory and in a file, and, when a PostgreSQL
// server is given to the suite, PostgreSQL with plain tables and with every store table partitioned.
// Each target opens a database of its own and removes it afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseConfig } from '../src/config.ts';
import { DIALECTS, type Dialect, freshPostgresUrl, TEST_PARTITIONS } from './harness.ts';

export interface StorageTarget {
  name: string;
  dialect: Dialect;
  file: boolean;
  /** PostgreSQL: the first migration partitions every store table into this many. */
  partitions?: number;
  database(): Promise<{ config: DatabaseConfig; cleanup(): Promise<void> }>;
}

const postgres = async () => {
  const schema = await freshPostgresUrl();
  return { config: { dialect: 'postgres', url: schema.url } as const, cleanup: () => schema.drop() };
};

/** Every target; `label` names the SQLite file's folder, so a leftover one says which test left it. */
export function storageTargets(label: string): StorageTarget[] {
  const targets: StorageTarget[] = [
    {
      name: 'sqlite (memory)',
      dialect: 'sqlite',
      file: false,
      database: async () => ({ config: { dialect: 'sqlite', path: ':memory:' }, cleanup: async () => {} }),
    },
    {
      name: 'sqlite (file)',
      dialect: 'sqlite',
      file: true,
      database: async () => {
        const dir = mkdtempSync(join(tmpdir(), `storegate-${label}-`));
        return {
          config: { dialect: 'sqlite', path: join(dir, 'contract.db') },
          cleanup: async () => rmSync(dir, { recursive: true, force: true }),
        };
      },
    },
  ];
  if (DIALECTS.includes('postgres')) {
    targets.push({ name: 'postgres', dialect: 'postgres', file: false, database: postgres });
    targets.push({
      name: 'postgres (store tables partitioned)',
      dialect: 'postgres',
      file: false,
      partitions: TEST_PARTITIONS,
      database: postgres,
    });
  }
  return targets;
}

// Checks that queries on the partitioned layout are routed by store: a storage whose every query is
// recorded, and the plans of those queries, read one by one, counting the partitions of each store
// table they would read. A query that names its store reads one; any other reads them all (and
// under a sharded PostgreSQL would go to every shard).
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { FLEET_WIDE, fleetWideName } from '../src/storage/fleet-wide.ts';
import { STORE_TABLES } from '../src/storage/partitioning.ts';
import type { Storage } from '../src/storage/ports/storage.ts';
import type { Database } from '../src/storage/schema.ts';
import { storageOn } from '../src/storage/sql-storage.ts';

interface PlanNode {
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

export interface RecordingStorage {
  storage: Storage;
  queries: CompiledQuery[];
  close(): Promise<void>;
}

/** A PostgreSQL database handle whose every query is also appended to `queries`. */
export function recordingDb(url: string, poolSize = 10): { db: Db; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') queries.push(event.query);
    },
  });
  const real = openDatabase({ dialect: 'postgres', url }, { poolSize: 1 });
  const db: Db = {
    ...real,
    kysely,
    // Statements run straight on the pool (outside a transaction) are recorded as well.
    async pgQuery(text, parameters) {
      queries.push(CompiledQuery.raw(text, [...parameters]));
      return pool.query(text, [...parameters]);
    },
    async close() {
      await kysely.destroy();
      await real.close();
    },
  };
  return { db, queries };
}

export function recordingStorage(url: string, poolSize = 10): RecordingStorage {
  const { db, queries } = recordingDb(url, poolSize);
  const storage = storageOn(db);
  return { storage, queries, close: () => storage.close() };
}

const PARTITION = new RegExp(`^(${STORE_TABLES.join('|')})_p\\d+$`);

function partitionsRead(plan: PlanNode, into: Map<string, Set<string>>): void {
  const m = plan['Relation Name'] ? PARTITION.exec(plan['Relation Name']) : null;
  if (m) {
    const set = into.get(m[1]!) ?? new Set<string>();
    set.add(plan['Relation Name']!);
    into.set(m[1]!, set);
  }
  for (const p of plan.Plans ?? []) partitionsRead(p, into);
}

/**
 * The recorded statements (distinct by SQL text, explained with the parameters of their first run)
 * that would read more than one partition of some store table, except those marked with a name of
 * the fleet-wide list (storage/fleet-wide.ts).
 */
export async function unroutedQueries(url: string, queries: readonly CompiledQuery[]): Promise<{ sql: string; tables: string[] }[]> {
  const seen = new Map<string, CompiledQuery>();
  for (const q of queries) {
    if (!/^\s*(select|update|delete|insert|with)/i.test(q.sql)) continue;
    if (!seen.has(q.sql)) seen.set(q.sql, q);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const out: { sql: string; tables: string[] }[] = [];
  try {
    for (const q of seen.values()) {
      const res = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (format json) ${q.sql}`, [...q.parameters]);
      const read = new Map<string, Set<string>>();
      partitionsRead(res.rows[0]!['QUERY PLAN'][0]!.Plan, read);
      const wide = [...read].filter(([, parts]) => parts.size > 1).map(([table]) => table);
      // A statement named in the fleet-wide list reads every store by design; a name not in the
      // list lets nothing through.
      const name = fleetWideName(q.sql);
      if (wide.length > 0 && !(name !== undefined && Object.hasOwn(FLEET_WIDE, name))) out.push({ sql: q.sql, tables: wide });
    }
  } finally {
    await client.end();
  }
  return out;
}

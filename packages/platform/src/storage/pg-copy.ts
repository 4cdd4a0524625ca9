// COPY … FROM STDIN on a connection of the PostgreSQL pool. Kysely's driver only sends statements
// with parameters, so the stream is run on the pool's own client; its failures are translated and
// reported as the pool's statements' are (see pg-pool.ts).
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type copyStreams from 'pg-copy-streams';
import { databaseFault, translateDatabaseError } from './database-faults.ts';
import type { DatabaseHealth } from './pg-pool.ts';

/** Runs `statement` (a COPY … FROM STDIN) with `data` as its input; resolves once it committed. */
export type CopyFrom = (statement: string, data: Iterable<string>) => Promise<void>;

const require = createRequire(import.meta.url);

export function pgCopyFrom(pool: pg.Pool, health: DatabaseHealth): CopyFrom {
  // Loaded with the pool, as the pg driver is: a node on SQLite never holds it.
  const { from: copyFromStdin } = require('pg-copy-streams') as typeof copyStreams;
  const fail = (err: unknown, connecting: boolean): unknown => {
    const translated = translateDatabaseError(err, connecting);
    const fault = databaseFault(translated);
    if (fault) health.failed(fault);
    return translated;
  };
  return async (statement, data) => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw fail(err, true);
    }
    let broken: Error | undefined;
    try {
      // Pieces are pulled as the socket takes them, so the server parses one while the next is made.
      await pipeline(Readable.from(data), client.query(copyFromStdin(statement)));
      health.succeeded();
    } catch (err) {
      const translated = fail(err, false);
      // A COPY that failed on the server leaves the connection usable (the server ends the COPY with
      // an error and rolls it back); one that failed on the way there does not.
      if (translated !== err || !(err as { code?: unknown }).code) broken = err instanceof Error ? err : new Error(String(err));
      throw translated;
    } finally {
      client.release(broken);
    }
  };
}

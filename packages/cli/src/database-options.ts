// The PostgreSQL pool settings every long-running command (`serve`, `worker`) takes.
import { Option, type Command } from 'commander';

export interface DatabasePoolOptions {
  poolSize?: string;
  dbStatementTimeout?: string;
  dbConnectTimeout?: string;
}

export function databasePoolOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--pool-size <n>', 'PostgreSQL connections at most per process (default 10)').env('DB_POOL_SIZE'))
    .addOption(
      new Option('--db-statement-timeout <ms>', 'PostgreSQL cancels a statement after this; 0: never (default 30000)').env(
        'DB_STATEMENT_TIMEOUT_MS',
      ),
    )
    .addOption(
      new Option('--db-connect-timeout <ms>', 'getting a PostgreSQL connection fails after this (default 5000)').env(
        'DB_CONNECT_TIMEOUT_MS',
      ),
    );
}

/** The pool settings as loadConfig takes them. */
export function databasePoolConfig(opts: DatabasePoolOptions) {
  return { poolSize: opts.poolSize, dbStatementTimeout: opts.dbStatementTimeout, dbConnectTimeout: opts.dbConnectTimeout };
}

// The PostgreSQL pool's size and deadlines. Each is bounded so a typo cannot make a node open
// thousands of connections or wait for ever on a database that went away.
import type { DatabaseSettings, RawConfig } from './types.ts';
import { int } from './parsers.ts';

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

export function parseDatabaseSettings(raw: Pick<RawConfig, 'poolSize' | 'dbStatementTimeout' | 'dbConnectTimeout'>): DatabaseSettings {
  return {
    poolSize: int('--pool-size', raw.poolSize, DEFAULT_POOL_SIZE, 1, 1000),
    // 0 turns the deadline off (not advised: a statement stuck on a lock then holds its request).
    statementTimeoutMs: int('--db-statement-timeout', raw.dbStatementTimeout, DEFAULT_STATEMENT_TIMEOUT_MS, 0, 3_600_000),
    connectTimeoutMs: int('--db-connect-timeout', raw.dbConnectTimeout, DEFAULT_CONNECT_TIMEOUT_MS, 100, 600_000),
  };
}

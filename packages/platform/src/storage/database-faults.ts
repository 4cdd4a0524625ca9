// Which driver errors mean "the database is not there right now" rather than "this query is
// wrong". The first kind becomes DatabaseUnavailableError (503 with Retry-After: sending the same
// request later will work); every other error is left as it is (a constraint violation stays a
// constraint violation, a bug stays a 500).
import { DatabaseUnavailableError, type DatabaseFault } from '../domain/errors.ts';

/** Socket errors of a connection that could not be made or broke (Node's `err.code`). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs (PostgreSQL's `err.code`) of a server that is going away, not accepting connections yet,
 * or out of connection slots. Class 08 (connection exception) is matched as a whole.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, in recovery
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '53400', // configuration_limit_exceeded
]);

/** Messages pg and pg-pool use for a connection that ended, timed out or cannot be used any more. */
const CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
  /^Connection ended/,
];
const CONNECT_TIMEOUT_MESSAGES = [/^timeout exceeded when trying to connect/, /^Connection terminated due to connection timeout/];

function codeOf(err: object): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The fault an error of either driver stands for, or undefined when it is not about the database
 * being unavailable. `connecting` says the error came from getting a connection: whatever went
 * wrong there (refused, timed out, a database that does not accept connections now, even a
 * rejected password after a credentials change), the request itself was not at fault and nothing
 * ran, so it is "cannot connect".
 */
export function databaseFault(err: unknown, connecting = false): DatabaseFault | undefined {
  if (err instanceof DatabaseUnavailableError) return err.fault;
  if (connecting) return 'cannot connect';
  if (typeof err !== 'object' || err === null) return undefined;
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : '';
  // SQLite: another connection held the write lock past busy_timeout (SQLITE_BUSY and its
  // extended codes such as SQLITE_BUSY_SNAPSHOT).
  if (code?.startsWith('SQLITE_BUSY')) return 'busy';
  if (CONNECT_TIMEOUT_MESSAGES.some((re) => re.test(message))) return 'cannot connect';
  // statement_timeout on the server, or the client's own deadline when the server went silent.
  if (code === '57014' && /statement timeout/.test(message)) return 'statement timeout';
  if (/^Query read timeout/.test(message)) return 'statement timeout';
  const lost =
    (code !== undefined && (SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) ||
    CONNECTION_MESSAGES.some((re) => re.test(message));
  if (!lost) return undefined;
  return code === 'ECONNREFUSED' || code === '57P03' || code === '53300' ? 'cannot connect' : 'connection lost';
}

/** The error to throw in place of `err`: DatabaseUnavailableError when it is one of those faults. */
export function translateDatabaseError(err: unknown, connecting = false): unknown {
  if (err instanceof DatabaseUnavailableError) return err;
  const fault = databaseFault(err, connecting);
  return fault ? new DatabaseUnavailableError(fault) : err;
}

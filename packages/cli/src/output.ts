// Output conventions of every command, so scripts can rely on them:
// - success prints on stdout (only JSON with --json) and exits 0;
// - a failure (the command ran and could not do it: unknown record, refused input, database down)
//   exits 1; a usage error (unknown command or option, a missing or malformed argument or value)
//   exits 2, before anything was changed;
// - a failure or usage error prints nothing on stdout, and on stderr one line of text, or with
//   --json one JSON object {"error": {"code", "message"}}.
import { ConfigError, ConflictError, DatabaseUnavailableError, NotFoundError, ValidationFailedError } from '@storegate/platform';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure a command reports in its own words; `code` is the machine-readable reason. */
export class CliError extends Error {
  readonly exitCode: number = EXIT_FAILURE;
  constructor(
    message: string,
    readonly code: string = 'failed',
  ) {
    super(message);
  }
}

/** The command line itself is wrong (exit 2): thrown before anything is read or changed. */
export class UsageError extends CliError {
  override readonly exitCode: number = EXIT_USAGE;
  constructor(message: string) {
    super(message, 'usage');
  }
}

/** A record named on the command line does not exist (exit 1). */
export function notFound(message: string): CliError {
  return new CliError(message, 'not_found');
}

/**
 * Turns a malformed configuration value (a flag or its environment variable) into a usage error.
 * Only for parsing values before the database is opened: the same error class is also raised later
 * for a value that is well-formed but wrong for this database (a master key that does not match),
 * which is a failure.
 */
export function asUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

export interface Failure {
  code: string;
  message: string;
  exitCode: number;
}

/** What an error thrown by a command means for its caller: exit code, code and one-line message. */
export function failureOf(err: unknown): Failure {
  const message = reasonOf(err).split('\n')[0] ?? '';
  if (err instanceof CliError) return { code: err.code, message, exitCode: err.exitCode };
  if (err instanceof ValidationFailedError) return { code: 'invalid_input', message, exitCode: EXIT_FAILURE };
  if (err instanceof NotFoundError) return { code: 'not_found', message, exitCode: EXIT_FAILURE };
  if (err instanceof ConflictError) return { code: 'conflict', message, exitCode: EXIT_FAILURE };
  if (err instanceof ConfigError) return { code: 'config', message, exitCode: EXIT_FAILURE };
  if (err instanceof DatabaseUnavailableError || isConnectionRefused(err))
    return { code: 'database_unavailable', message, exitCode: EXIT_FAILURE };
  return { code: 'failed', message, exitCode: EXIT_FAILURE };
}

/** The error as printed: `storegate: <message>` in text, the JSON object with --json. */
export function formatFailure(failure: Failure, json: boolean): string {
  return json ? `${JSON.stringify({ error: { code: failure.code, message: failure.message } })}\n` : `storegate: ${failure.message}\n`;
}

export function reasonOf(err: unknown): string {
  if (err instanceof ValidationFailedError) {
    return `invalid input: ${Object.entries(err.errors)
      .map(([field, msgs]) => `${field} ${msgs.join(', ')}`)
      .join('; ')}`;
  }
  if (err instanceof ConfigError || err instanceof CliError) return err.message;
  if (isConnectionRefused(err)) return `cannot connect to the database: ${(err as Error).message}`;
  return err instanceof Error ? err.message : String(err);
}

function isConnectionRefused(err: unknown): boolean {
  return err instanceof Error && 'code' in err && (err as { code?: string }).code === 'ECONNREFUSED';
}

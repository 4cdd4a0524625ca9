// Output conventions of every command, so scripts can rely on them: --json prints only JSON on
// stdout; failures exit non-zero with a one-line reason on stderr.
import { ConfigError, ValidationFailedError } from '@storegate/platform';

export class CliError extends Error {}

export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

export function reasonOf(err: unknown): string {
  if (err instanceof ValidationFailedError) {
    return `invalid input: ${Object.entries(err.errors)
      .map(([field, msgs]) => `${field} ${msgs.join(', ')}`)
      .join('; ')}`;
  }
  if (err instanceof ConfigError || err instanceof CliError) return err.message;
  if (err instanceof Error && 'code' in err && (err as { code?: string }).code === 'ECONNREFUSED')
    return `cannot connect to the database: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

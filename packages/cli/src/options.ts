import { Option, type Command } from 'commander';

/** Options every command takes: the database (a SQLite file by default, or a postgres:// URL) and `--json` for scripts. */
export function common(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--database <path-or-url>', 'SQLite file path or postgres:// URL (default ./data/storegate.db)').env('DATABASE_URL'),
    )
    .option('--json', 'machine-readable output: only JSON on stdout', false);
}

/** `--password-scrypt-n`: the cost of new password hashes, for the commands that run the platform. */
export function passwordScryptNOption(): Option {
  return new Option('--password-scrypt-n <n>', 'scrypt cost of new password hashes, a power of two (default 32768)').env(
    'PASSWORD_SCRYPT_N',
  );
}

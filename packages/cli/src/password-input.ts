// Where a command takes a new password from. A password given as a flag's value is seen by anyone
// who can list processes (`ps`) and stays in the shell's history; read from standard input it is
// seen by neither. When none is given, a strong one is generated and shown once.
import { randomBytes } from 'node:crypto';
import { UsageError } from './output.ts';

/** The first line of standard input: a password never goes on the command line, where `ps` shows it. */
export async function firstLineOfStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) {
    text += chunk as string;
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/** 120 random bits as 20 URL-safe characters: easy to copy, nothing to guess. */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

/** A password a command was given, and the warning to print once the command succeeded. */
export interface GivenPassword {
  /** Undefined when none was given: the caller generates one. */
  password: string | undefined;
  warn(): void;
}

/**
 * The password a command was given: `--<flag>-stdin` reads the first line of standard input,
 * `--<flag> <value>` still works (for scripts and tests that have no other way) with a warning on
 * stderr. The warning waits for the command's success: a failure keeps its one line (or one JSON
 * object) on stderr. Every refusal comes before anything is read from the database or changed.
 */
export async function givenPassword(flag: string, value: string | undefined, fromStdin: boolean): Promise<GivenPassword> {
  if (value !== undefined && fromStdin) throw new UsageError(`--${flag} and --${flag}-stdin: give the password one way, not both`);
  if (fromStdin) {
    const password = await firstLineOfStdin();
    if (password === '') throw new UsageError(`--${flag}-stdin: standard input held no password (its first line is empty)`);
    return { password, warn: () => {} };
  }
  const warn = () =>
    process.stderr.write(
      `warning: --${flag} shows the password to anyone who can list processes (ps) and keeps it in your shell history; ` +
        `pipe it to --${flag}-stdin instead, or leave both out to have one generated\n`,
    );
  return { password: value, warn: value === undefined ? () => {} : warn };
}

/** The line that shows a generated password, once. */
export function generatedPasswordLine(whose: string, password: string): string {
  return `password of ${whose} (generated; shown once, pass it on safely):\n${password}`;
}

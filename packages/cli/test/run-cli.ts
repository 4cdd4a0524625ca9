// Runs the storegate command as a child process without blocking the test's event loop: a
// synchronous spawn held the test worker for as long as the command ran, and a test that ran
// several in a row could stall the worker past the test runner's own 60 s reporting deadline.
import { spawn } from 'node:child_process';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Each command starts a Node process that loads the platform's sources: a few seconds apiece on a
// busy two-core machine, so a test that runs several of them needs more than the default timeout.
export const CLI_TEST_TIMEOUT_MS = 180_000;

export const STOREGATE_BIN = new URL('../bin/storegate.js', import.meta.url).pathname;

/** `input`, when given, is written to the command's standard input (then closed). */
export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [STOREGATE_BIN, ...args], {
      env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

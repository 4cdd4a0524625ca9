// Two ways to run the storegate command in a test. `runCli` starts it as a child process: needed
// where the process itself is what is tested (starting, signals, standard input, the bin and its
// compiled build, how the process exits, several processes at once). `runCliInProcess` runs the
// same command line inside the test's own process, for everything else: each child costs most of
// a second of CPU to start Node and load the platform, and the CLI suite runs hundreds of them.
//
// The child is started asynchronously: a synchronous spawn held the test worker for as long as the
// command ran, and a test that ran several in a row could stall the worker past the test runner's
// own 60 s reporting deadline.
import { spawn } from 'node:child_process';
import { runProgram, type Io } from '../src/program.ts';

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

// The environment, the output streams and the exit code belong to the whole process, so two
// commands running at once would see each other's: each call waits for the one before it.
let queue: Promise<unknown> = Promise.resolve();

/** The same command line and result as `runCli`, run in this process; standard input is not supported. */
export function runCliInProcess(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliResult> {
  if (input !== undefined) return Promise.reject(new Error('runCliInProcess cannot feed standard input: use runCli'));
  const result = queue.then(() => runOnce(args, env));
  queue = result.catch(() => undefined);
  return result;
}

async function runOnce(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
  };
  const savedEnv = { ...process.env };
  process.exitCode = undefined;
  // Commands print through process.stdout.write and some warn on process.stderr directly.
  const restoreStdout = replaceWrite(process.stdout, (text) => io.out(text));
  const restoreStderr = replaceWrite(process.stderr, (text) => io.err(text));
  try {
    replaceEnv(env);
    const code = await runProgram(args, io);
    return { code, stdout, stderr };
  } finally {
    restoreStdout();
    restoreStderr();
    process.exitCode = undefined;
    replaceEnv(savedEnv);
  }
}

/** Makes process.env hold exactly `env`, in place, as a child started with that environment sees it. */
function replaceEnv(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) if (env[key] === undefined) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

/** Sends what is written to `stream` to `sink` instead; answers the function that undoes it exactly. */
function replaceWrite(stream: NodeJS.WriteStream, sink: (text: string) => void): () => void {
  const own = Object.hasOwn(stream, 'write');
  const { write } = stream;
  stream.write = capture(sink);
  return () => {
    // Usually write() is the stream class's own method: deleting the stand-in brings it back.
    if (own) stream.write = write;
    else Reflect.deleteProperty(stream, 'write');
  };
}

/** A stand-in for a stream's write() that hands the text to `sink` and reports it written. */
function capture(sink: (text: string) => void): NodeJS.WriteStream['write'] {
  return ((chunk: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown): boolean => {
    sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  }) as NodeJS.WriteStream['write'];
}

// Starting benchmark servers as child processes (so load generator and server do not share an
// event loop) and waiting for their {type:'ready'} message.
import { fork, type ChildProcess } from 'node:child_process';

export async function startChild<T>(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; ready: T }> {
  // BENCH_CHILD_CPU_PROF=<dir>: every server child writes a CPU profile there (for looking into a figure).
  const prof = process.env.BENCH_CHILD_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CHILD_CPU_PROF}`] : [];
  const child = fork(new URL(script, import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx', ...prof],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, ready };
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.disconnect();
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

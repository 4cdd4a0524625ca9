// Runs the example app exactly as `npm run example` does (node --conditions=@storegate/source --import tsx
// examples/app/src/main.ts), configured by environment, as a child process on a given port.
import { spawn, type ChildProcess } from 'node:child_process';
import { request, terminate } from './server-process.ts';

const MAIN = new URL('../examples/app/src/main.ts', import.meta.url).pathname;
const CWD = new URL('../examples/app/', import.meta.url).pathname;

export interface RunningExampleApp {
  port: number;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

export async function startExampleApp(options: {
  port: number;
  platformPort: number;
  clientId: string;
  clientSecret: string;
  env?: Record<string, string>;
}): Promise<RunningExampleApp> {
  let out = '';
  const child = spawn(process.execPath, ['--conditions=@storegate/source', '--import', 'tsx', MAIN], {
    cwd: CWD,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      STOREGATE_CLIENT_ID: options.clientId,
      STOREGATE_CLIENT_SECRET: options.clientSecret,
      STOREGATE_API_ORIGIN: `http://{shop}:${options.platformPort}`,
      APP_PORT: String(options.port),
      APP_SESSION_STORAGE: 'memory',
      ...options.env,
    },
  });
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the example app exited: ${out}`);
    try {
      if ((await request(options.port, `localhost:${options.port}`, 'GET', '/healthz')).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the example app did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port: options.port,
    child,
    output: () => out,
    async stop() {
      await terminate(child);
    },
  };
}

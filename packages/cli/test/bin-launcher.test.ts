// The bin started as a program (how `storegate`, npx and npm start run it): its first lines run
// under sh and start Node on the same file in the same process, giving the long-running commands
// a small young generation through NODE_OPTIONS, ahead of whatever the operator put there.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/storegate.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'storegate-launcher-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Loaded into the node through the operator's NODE_OPTIONS: reports what the node was started with.
const reporter = join(dir, 'report.mjs');
writeFileSync(
  reporter,
  "process.stderr.write('launched ' + JSON.stringify({ pid: process.pid, options: process.env.NODE_OPTIONS }) + '\\n');\n",
);

async function launch(args: string[]): Promise<{ childPid: number; pid: number; options: string }> {
  const child = spawn(bin, args, { env: { ...process.env, NODE_OPTIONS: `--import ${reporter}` }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  await new Promise((resolve) => child.once('exit', resolve));
  const line = /^launched (.*)$/m.exec(err);
  if (!line) throw new Error(`no report from the node: ${err}`);
  return { childPid: child.pid!, ...(JSON.parse(line[1]!) as { pid: number; options: string }) };
}

it('serve and worker get --max-semi-space-size=4 first, the operator options after it, in the process started', async () => {
  for (const command of ['serve', 'worker']) {
    const run = await launch([command, '--help']);
    expect(run.options).toBe(`--max-semi-space-size=4 --import ${reporter}`);
    // exec: the process a process manager started is the node itself, no shell stays behind.
    expect(run.pid).toBe(run.childPid);
  }
});

it('other commands run with the operator options unchanged', async () => {
  const run = await launch(['stores', '--help']);
  expect(run.options).toBe(`--import ${reporter}`);
});

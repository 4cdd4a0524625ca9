// The in-process runner leaves the test's process as it found it: its environment, its output
// streams and its exit code; and it runs one command at a time, since all three are shared.
import { describe, expect, it } from 'vitest';
import { cliVersion } from '../src/program.ts';
import { runCliInProcess } from './run-cli.ts';

describe('runCliInProcess', () => {
  it('captures the output and the exit code, and restores the environment, the streams and process.exitCode', async () => {
    const env = { ...process.env };
    const { write: stdoutWrite } = process.stdout;
    const { write: stderrWrite } = process.stderr;
    const version = await runCliInProcess(['--version'], { ONLY_THIS: '1' });
    expect(version).toEqual({ code: 0, stdout: `${cliVersion()}\n`, stderr: '' });
    const usage = await runCliInProcess(['frobnicate', '--json'], {});
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(JSON.parse(usage.stderr)).toMatchObject({ error: { code: 'usage' } });
    expect(process.env).toEqual(env);
    expect(process.stdout.write).toBe(stdoutWrite);
    expect(process.stderr.write).toBe(stderrWrite);
    expect(process.exitCode).toBeUndefined();
  });

  it('runs calls made together one after the other, each with its own result', async () => {
    const results = await Promise.all([
      runCliInProcess(['--version'], {}),
      runCliInProcess(['frobnicate'], {}),
      runCliInProcess(['--version'], {}),
    ]);
    expect(results.map((r) => r.code)).toEqual([0, 2, 0]);
    expect(results[0]!.stdout).toBe(`${cliVersion()}\n`);
    expect(results[1]!.stdout).toBe('');
    expect(results[1]!.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('refuses standard input: such a command needs a child process', async () => {
    await expect(runCliInProcess(['stores', 'list'], {}, 'text\n')).rejects.toThrow(/standard input/);
  });
});

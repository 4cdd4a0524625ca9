// The conventions every command shares, checked in-process (no child process): the version, the
// examples in every --help, and how a usage error is reported (exit 2; one JSON object with --json).
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { commandPath } from '../src/help.ts';
import { buildProgram, cliVersion } from '../src/program.ts';
import { runCliInProcess } from './run-cli.ts';

const run = (argv: string[]) => runCliInProcess(argv, process.env);

function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.filter((c) => c.name() !== 'help').flatMap(everyCommand)];
}

describe('storegate command-line conventions', () => {
  it('--version prints the package version and exits 0', async () => {
    expect(cliVersion()).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-V']) expect(await run([flag])).toEqual({ code: 0, stdout: `${cliVersion()}\n`, stderr: '' });
  });

  it('every command shows examples in its --help', async () => {
    const paths = everyCommand(buildProgram()).map(commandPath);
    expect(paths).toContain('stores create');
    const missing: string[] = [];
    for (const path of paths) {
      const res = await run([...path.split(' ').filter(Boolean), '--help']);
      expect(res.code, path).toBe(0);
      if (!/\nExamples:\n {2}\$ (MASTER_KEY=\S+ NEW_MASTER_KEY=\S+ )?storegate /.test(res.stdout)) missing.push(path || '(root)');
    }
    expect(missing).toEqual([]);
  });

  it('a usage error exits 2 with the help in text, or one JSON object on stderr with --json', async () => {
    const usage: Array<[string[], RegExp]> = [
      [['no-such-command'], /unknown command 'no-such-command'/],
      [['stores', 'create', 'shop'], /required option '--owner-email <email>' not specified/],
      [['apps', 'rotate-secret'], /missing required argument 'client_id'/],
      [['migrate', '--no-such-option'], /unknown option '--no-such-option'/],
      [['seed', '--store', 'demo', '--products', 'many'], /--products: expected a whole number, got "many"/],
      [['webhooks', 'deliveries', '--limit', '-1'], /--limit: expected a whole number/],
      [['private-apps', 'rotate-secret', 'abc', '--store', 'demo'], /<id>: expected the private app's numeric id/],
      [['serve', '--pool-size', '0'], /--pool-size: expected an integer from 1 to 1000/],
    ];
    for (const [argv, reason] of usage) {
      const text = await run(argv);
      expect(text.code, argv.join(' ')).toBe(2);
      expect(text.stdout).toBe('');
      expect(text.stderr).toMatch(reason);
      const json = await run([...argv, '--json']);
      expect(json.code, argv.join(' ')).toBe(2);
      expect(json.stdout).toBe('');
      expect(json.stderr.endsWith('\n')).toBe(true);
      expect(json.stderr.trim().split('\n')).toHaveLength(1);
      const body = JSON.parse(json.stderr) as { error: { code: string; message: string } };
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error.code).toBe('usage');
      expect(body.error.message).toMatch(reason);
      expect(body.error.message).not.toMatch(/^error:|^storegate:/);
    }
  });

  it('no command at all is a usage error', async () => {
    const res = await run([]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/Usage: storegate/);
  });
});

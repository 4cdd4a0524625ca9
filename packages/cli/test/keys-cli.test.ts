// The master key as an operator meets it: a command or server started with another key than the
// database's stops with one sentence and exit code 1, changing nothing; `storegate keys rotate`
// re-seals every secret (flags or environment), can be run again, refuses a wrong current key;
// no key ever appears in what the commands print.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { masterKeyId } from '../../platform/src/domain/secret-box.ts';
import { createPlatform } from '../../platform/src/platform.ts';
import { openDatabase } from '../../platform/src/storage/database.ts';
import { CLI_TEST_TIMEOUT_MS, type CliResult, runCliInProcess, STOREGATE_BIN } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-keys-cli-'));
const database = join(dir, 'keys.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hex = (name: string) => createHash('sha256').update(`storegate cli ${name}`).digest('hex');
const K1 = hex('one');
const K2 = hex('two');
const K3 = hex('three');
const printed: string[] = [];

async function run(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const res = await runCliInProcess([...args, '--database', database], {
    ...process.env,
    DATABASE_URL: '',
    MASTER_KEY: '',
    PREVIOUS_MASTER_KEY: '',
    NEW_MASTER_KEY: '',
    ...env,
  });
  printed.push(res.stdout, res.stderr);
  return res;
}

/** `serve` with a wrong key must stop by itself; if it served instead, it is stopped and the test fails. */
function serve(env: Record<string, string>): Promise<CliResult & { killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [STOREGATE_BIN, 'serve', '--port', '0', '--database', database], {
      env: { ...process.env, DATABASE_URL: '', PREVIOUS_MASTER_KEY: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, 60_000);
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      printed.push(stdout, stderr);
      resolve({ code, stdout, stderr, killed });
    });
  });
}

async function snapshot(): Promise<string> {
  const db = openDatabase({ dialect: 'sqlite', path: database });
  try {
    const keys = await db.kysely.selectFrom('master_keys').selectAll().orderBy('name').execute();
    const apps = await db.kysely.selectFrom('apps').select(['id', 'client_secret_enc']).orderBy('id').execute();
    return JSON.stringify([keys, apps]);
  } finally {
    await db.close();
  }
}

describe('storegate keys', () => {
  it(
    'another key stops every command and serve with one sentence; keys rotate re-seals, reruns harmlessly, refuses a wrong key',
    async () => {
      const created = await run(
        [
          'apps',
          'create',
          '--name',
          'Keyed',
          '--app-url',
          'http://localhost:3000/',
          '--redirect-uri',
          'http://localhost:3000/cb',
          '--json',
        ],
        { MASTER_KEY: K1 },
      );
      expect(created.code, created.stderr).toBe(0);
      const { client_id: clientId, client_secret: clientSecret } = JSON.parse(created.stdout) as Record<string, string>;
      const before = await snapshot();

      const sentence =
        `storegate: the master key does not match the key this database's secrets are sealed with (key id ${masterKeyId(Buffer.from(K1, 'hex'))}; ` +
        `this node's key id ${masterKeyId(Buffer.from(K2, 'hex'))}); start with the same MASTER_KEY as the other nodes, or see \`storegate keys rotate\`\n`;
      const migrate = await run(['migrate'], { MASTER_KEY: K2 });
      expect(migrate).toMatchObject({ code: 1, stdout: '', stderr: sentence });
      const served = await serve({ MASTER_KEY: K2 });
      expect(served.killed).toBe(false);
      expect(served.code).toBe(1);
      expect(served.stderr).toBe(sentence);
      expect(await snapshot()).toBe(before);

      // Bad input: one line, exit 2, nothing changed.
      const missing = await run(['keys', 'rotate'], { MASTER_KEY: K1 });
      expect(missing).toMatchObject({ code: 2, stderr: 'storegate: --new-master-key (NEW_MASTER_KEY) is required\n' });
      const short = await run(['keys', 'rotate', '--new-master-key', 'abcd'], { MASTER_KEY: K1 });
      expect(short).toMatchObject({ code: 2, stderr: 'storegate: --new-master-key: must be at least 32 bytes (64 hex characters)\n' });
      const batch = await run(['keys', 'rotate', '--new-master-key', K2, '--batch-size', '0'], { MASTER_KEY: K1 });
      expect(batch).toMatchObject({ code: 2, stderr: 'storegate: --batch-size: expected a whole number from 1 to 10000\n' });
      const wrong = await run(['keys', 'rotate', '--master-key', K3, '--new-master-key', K2]);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/^storegate: the master key does not match the key this database's secrets are sealed with/);
      expect(await snapshot()).toBe(before);

      // The rotation, keys from the environment.
      const rotated = await run(['keys', 'rotate', '--json', '--batch-size', '1'], { MASTER_KEY: K1, NEW_MASTER_KEY: K2 });
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(JSON.parse(rotated.stdout)).toMatchObject({
        from: masterKeyId(Buffer.from(K1, 'hex')),
        to: masterKeyId(Buffer.from(K2, 'hex')),
        switched: true,
        resealed: { apps: 1, private_apps: 0, one_time_reveals: 0, master_keys: 2 },
        resealedTotal: 3,
        unreadable: 0,
      });
      // Again, flags this time: nothing left to re-seal.
      const again = await run(['keys', 'rotate', '--master-key', K1, '--new-master-key', K2]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('re-sealed 0 secrets');
      expect(again.stdout).toContain('3 were under the new key already');

      // The new key alone starts; the old one is refused, told it was replaced.
      expect((await run(['migrate'], { MASTER_KEY: K2 })).code).toBe(0);
      const old = await run(['migrate'], { MASTER_KEY: K1 });
      expect(old.code).toBe(1);
      expect(old.stderr).toContain('(the key this node holds was replaced by a rotation)');
      const platform = await createPlatform(loadConfig({ database, masterKey: K2, logLevel: 'silent' }), { http: false });
      try {
        await expect(platform.services.apps.authenticateClient(clientId, clientSecret)).resolves.toMatchObject({ client_id: clientId });
      } finally {
        await platform.close();
      }

      const all = printed.join('\n');
      for (const k of [K1, K2, K3]) {
        expect(all).not.toContain(k);
        expect(all).not.toContain(Buffer.from(k, 'hex').toString('base64'));
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

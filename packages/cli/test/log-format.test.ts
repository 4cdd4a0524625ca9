// Development logs a person can read: with the pretty format each request is one line (method,
// path, status, time) without its query string or any secret; JSON stays the default for
// production and for output that is not a terminal; a bad --log-format is a usage error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/src/config.ts';
import { createPlatform } from '../../platform/src/platform.ts';
import { defaultLogFormat, prettyLogStream } from '../src/log-format.ts';
import { runProgram } from '../src/program.ts';
import { workerLogger } from '../src/webhooks.command.ts';

const dir = mkdtempSync(join(tmpdir(), 'storegate-log-format-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return { stream, text: () => text };
}

describe('--log-format', () => {
  it('defaults to pretty only in development on a terminal', () => {
    expect(defaultLogFormat(undefined, true)).toBe('pretty');
    expect(defaultLogFormat('development', true)).toBe('pretty');
    expect(defaultLogFormat('development', false)).toBe('json');
    expect(defaultLogFormat('production', true)).toBe('json');
  });

  it('pretty: one line per request, no query string, no secret; json: the objects as before', async () => {
    const secret = 'sg_at_SECRETSECRETSECRETSECRETSECRETSECRET12345';
    const lines: Record<string, string> = {};
    for (const logFormat of ['pretty', 'json'] as const) {
      const out = capture();
      const config = loadConfig({ database: join(dir, `${logFormat}.db`), logFormat });
      const logStream = logFormat === 'pretty' ? prettyLogStream(out.stream, false) : { write: (line: string) => out.stream.write(line) };
      const platform = await createPlatform(config, { logStream });
      try {
        const res = await platform.http!.inject({
          method: 'GET',
          url: `/healthz?code=${secret}`,
          headers: { host: '127.0.0.1', 'access-token': secret, cookie: `sg_session=${secret}` },
        });
        expect(res.statusCode).toBe(200);
      } finally {
        await platform.close();
      }
      lines[logFormat] = out.text();
      expect(lines[logFormat]).not.toContain(secret);
    }
    const pretty = lines.pretty!.trim().split('\n');
    expect(pretty, lines.pretty).toHaveLength(1);
    expect(pretty[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: GET \/healthz 200 \d+\.\dms$/);
    const json = lines
      .json!.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    expect(json.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
  });

  it('the worker logs the same way: pretty lines with their level, or JSON lines, under the chosen level', () => {
    const pretty = capture();
    const logger = workerLogger('info', 'pretty', pretty.stream, false);
    logger.info({ worker: 'w1', claim_lease_ms: 30000 }, 'webhook worker started');
    logger.warn({ dependency: 'database' }, 'the database is unavailable');
    const lines = pretty.text().trim().split('\n');
    expect(lines, pretty.text()).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: webhook worker started .*"worker":\s*"w1"/);
    expect(lines[1]).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: the database is unavailable/);
    const json = capture();
    const quiet = workerLogger('warn', 'json', json.stream, false);
    quiet.info({ worker: 'w1' }, 'webhook worker started');
    quiet.error({ delivery: 7 }, 'attempt failed');
    expect(JSON.parse(json.text())).toMatchObject({ level: 'error', delivery: 7, msg: 'attempt failed' });
  });

  it('an unknown format is a usage error before anything starts', async () => {
    let stderr = '';
    const code = await runProgram(['serve', '--log-format', 'xml', '--port', '0', '--database', join(dir, 'none.db')], {
      out: () => {},
      err: (text) => {
        stderr += text;
      },
    });
    expect(code).toBe(2);
    expect(stderr).toBe('storegate: --log-format: expected pretty or json, got "xml"\n');
    stderr = '';
    const worker = await runProgram(['worker', '--log-format', 'xml', '--database', join(dir, 'none.db')], {
      out: () => {},
      err: (text) => {
        stderr += text;
      },
    });
    expect(worker).toBe(2);
    expect(stderr).toBe('storegate: --log-format: expected pretty or json, got "xml"\n');
  });
});

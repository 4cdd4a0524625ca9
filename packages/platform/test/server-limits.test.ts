// The server as the network sees it: a real listener on 127.0.0.1 with small timeouts cuts off
// slow clients, client errors (headers too large, a malformed request) say `Connection: close`;
// start-up refuses what only development may use; files holding secrets are private (0600).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createTestPlatform, type TestPlatform } from './harness.ts';

const KEY = 'ab'.repeat(32);

describe('start-up configuration', () => {
  it('production refuses an http public scheme, given or defaulted (a localhost store domain), with a one-line reason', () => {
    const production = { database: ':memory:', masterKey: KEY, mode: 'production' };
    for (const raw of [
      { ...production, storeDomain: 'shops.example', publicScheme: 'http' },
      { ...production, publicScheme: 'http' },
      { ...production },
    ]) {
      expect(() => loadConfig(raw)).toThrow(/^--public-scheme: production mode serves https only/);
    }
    expect(loadConfig({ ...production, storeDomain: 'shops.example' }).publicScheme).toBe('https');
    expect(loadConfig({ ...production, publicScheme: 'https' }).publicScheme).toBe('https');
    // Development keeps http (the default for localhost).
    expect(loadConfig({ database: ':memory:', masterKey: KEY }).publicScheme).toBe('http');
    // A missing master key is still the first thing production complains about.
    expect(() => loadConfig({ database: ':memory:', mode: 'production' })).toThrow(/--master-key \(MASTER_KEY\) is required/);
  });

  it('HTTP timeouts: documented defaults, flags validated, headers no longer than the whole request', () => {
    const base = { database: ':memory:', masterKey: KEY };
    expect(loadConfig(base).httpTimeouts).toEqual({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 72_000 });
    expect(loadConfig({ ...base, headersTimeout: '200', requestTimeout: 500, keepAliveTimeout: '1000' }).httpTimeouts).toEqual({
      headersMs: 200,
      requestMs: 500,
      keepAliveMs: 1000,
    });
    for (const [raw, reason] of [
      [{ requestTimeout: 'soon' }, /^--request-timeout: expected an integer from 100 to 600000/],
      [{ requestTimeout: '0' }, /^--request-timeout: expected an integer from 100/],
      [{ headersTimeout: '99' }, /^--headers-timeout: expected an integer from 100 to 600000/],
      [{ keepAliveTimeout: '-1' }, /^--keep-alive-timeout: expected an integer from 100 to 600000/],
      [{ headersTimeout: '5000', requestTimeout: '1000' }, /^--headers-timeout: must not be longer than --request-timeout \(1000 ms\)/],
    ] as const) {
      expect(() => loadConfig({ ...base, ...raw })).toThrow(reason);
    }
  });
});

describe('files holding secrets are created private (0600)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'storegate-modes-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the SQLite database with its -wal and -shm files, and the development master key', async () => {
    const path = join(dir, 'data', 'store.db');
    loadConfig({ database: path });
    expect((statSync(join(dir, 'data', 'master.key')).mode & 0o777).toString(8)).toBe('600');
    const db = openDatabase({ dialect: 'sqlite', path });
    try {
      db.sqlite!.exec('create table t (x integer)');
      db.sqlite!.exec('insert into t values (1)');
      for (const file of [path, `${path}-wal`, `${path}-shm`]) expect((statSync(file).mode & 0o777).toString(8), file).toBe('600');
    } finally {
      await db.close();
    }
  });
});

/** A raw connection to the server that records what it receives and when it is closed. */
function connect(port: number): Promise<{ socket: net.Socket; received: () => string; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    const opened = Date.now();
    const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now() - opened)));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Milliseconds until the server closed the socket, or `undefined` if it was still open after `limitMs`. */
async function closedWithin(closed: Promise<number>, limitMs: number): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), limitMs);
  });
  try {
    return await Promise.race([closed, late]);
  } finally {
    clearTimeout(timer);
  }
}

const CONNECTION_CLOSE = /\r\nconnection: close\r\n/i;

describe('a listening server on 127.0.0.1 with small timeouts', () => {
  let t: TestPlatform;
  let port: number;
  const timeouts = { headersMs: 300, requestMs: 600, keepAliveMs: 400 };
  /** Each cut-off must come within its timeout plus this margin (the server checks every 300 ms at most). */
  const MARGIN = 1500;
  beforeAll(async () => {
    t = await createTestPlatform('sqlite', { httpTimeouts: timeouts });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  afterAll(async () => t?.close());

  it('a client sending its body one byte at a time is cut off (408, Connection: close) within the request timeout', async () => {
    const c = await connect(port);
    c.socket.write(
      'POST /partner/login HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
    );
    const drip = setInterval(() => c.socket.writable && c.socket.write('a'), 100);
    try {
      const after = await closedWithin(c.closed, timeouts.requestMs + MARGIN);
      expect(after, 'socket still open').toBeDefined();
      expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(c.received()).toMatch(CONNECTION_CLOSE);
    } finally {
      clearInterval(drip);
      c.socket.destroy();
    }
  });

  it('a client sending its headers slowly is cut off within the headers timeout', async () => {
    const c = await connect(port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\n');
    const drip = setInterval(() => c.socket.writable && c.socket.write('X-A: b\r\n'), 50);
    try {
      const after = await closedWithin(c.closed, timeouts.headersMs + MARGIN);
      expect(after, 'socket still open').toBeDefined();
      expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(c.received()).toMatch(CONNECTION_CLOSE);
    } finally {
      clearInterval(drip);
      c.socket.destroy();
    }
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout; a silent one after the headers timeout', async () => {
    const c = await connect(port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\n\r\n');
    // Node keeps an idle connection up to a second past keepAliveTimeout (a guard against races).
    const after = await closedWithin(c.closed, timeouts.keepAliveMs + 1000 + MARGIN);
    expect(after, 'socket still open').toBeDefined();
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);

    const silent = await connect(port);
    expect(await closedWithin(silent.closed, timeouts.headersMs + MARGIN), 'socket still open').toBeDefined();
    silent.socket.destroy();
  });

  it('headers too large: 431 with Connection: close, then the connection is closed', async () => {
    const c = await connect(port);
    c.socket.write(`GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(await closedWithin(c.closed, 2000), 'socket still open').toBeDefined();
    const answer = c.received();
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toMatch(CONNECTION_CLOSE);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      code: 'BadRequest',
      message: 'Request headers are too large',
    });
  });

  it('a malformed request, even after a good one on the same connection: 400 with Connection: close', async () => {
    const c = await connect(port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost:8080\r\n\r\n');
    for (let i = 0; i < 200 && !/\r\n\r\n[\s\S]*\}/.test(c.received()); i++) await new Promise((r) => setTimeout(r, 10));
    c.socket.write('NOT A REQUEST\r\n\r\n');
    expect(await closedWithin(c.closed, 2000), 'socket still open').toBeDefined();
    const answers = c.received().split(/(?=HTTP\/1\.1 )/);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(answers[1]).toMatch(/^HTTP\/1\.1 400 /);
    expect(answers[1]).toMatch(CONNECTION_CLOSE);
  });

  it("a client error answering a HEAD has no body (Node's own client reads it), and names the API version under /openapi/{version}/", async () => {
    const head = (path: string) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, method: 'HEAD', path, headers: { host: 'localhost:8080', 'x-big': 'a'.repeat(20_000) } },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => {
              body += chunk.toString('latin1');
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    const probe = await head('/healthz');
    expect(probe.status).toBe(431);
    expect(probe.body).toBe('');
    expect(probe.headers.connection).toBe('close');
    // The length a GET would have been answered with (RFC 9110), and nothing after the fields.
    expect(probe.headers['content-length']).toBe(String('{"code":"BadRequest","message":"Request headers are too large"}'.length));
    expect(probe.headers['x-service-api-version']).toBeUndefined();
    const apiCall = await head('/openapi/2026-01/products?limit=5');
    expect(apiCall.status).toBe(431);
    expect(apiCall.body).toBe('');
    expect(apiCall.headers['x-service-api-version']).toBe('2026-01');

    // A malformed HEAD on a raw socket: the fields end the answer.
    const c = await connect(port);
    c.socket.write('HEAD /openapi/2025-06/products HTTP/1.1\r\nHost: localhost:8080\r\nBad Header\r\n\r\n');
    expect(await closedWithin(c.closed, 2000), 'socket still open').toBeDefined();
    expect(c.received()).toMatch(/^HTTP\/1\.1 400 /);
    expect(c.received()).toMatch(/\r\nx-service-api-version: 2025-06\r\n/i);
    expect(c.received().endsWith('\r\n\r\n')).toBe(true);
    // A GET keeps its body.
    const g = await connect(port);
    g.socket.write('GET /openapi/2025-06/products HTTP/1.1\r\nHost: localhost:8080\r\nBad Header\r\n\r\n');
    expect(await closedWithin(g.closed, 2000), 'socket still open').toBeDefined();
    expect(JSON.parse(g.received().slice(g.received().indexOf('\r\n\r\n') + 4))).toEqual({
      code: 'BadRequest',
      message: 'Malformed HTTP request',
    });
  });
});

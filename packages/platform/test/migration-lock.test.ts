// Several processes opening the same fresh SQLite file at the same moment migrate one after the
// other: exactly one applies each migration, the others find nothing pending, and none fails.
// Before the lock, each found every migration pending and all but one died on a table the first
// had just created ("table merchants already exists").
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/storage/database.ts';
import { freshPostgresUrl } from './harness.ts';
import { MIGRATIONS, migrateToLatest } from '../src/storage/migrate.ts';

const FIXTURE = new URL('./fixtures/migrate-on-go.ts', import.meta.url).pathname;
const PROCESSES = 8;

interface Child {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function start(path: string): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, path], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, exited };
}

const dir = mkdtempSync(join(tmpdir(), 'sg-migrate-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migrations started by several processes at once on a fresh SQLite file', () => {
  it('all succeed; each migration is applied exactly once', { timeout: 120_000 }, async () => {
    const path = join(dir, 'fresh.db');
    const children = Array.from({ length: PROCESSES }, () => start(path));
    try {
      const deadline = Date.now() + 90_000;
      while (children.some((c) => !c.out().includes('ready') && c.child.exitCode === null) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      for (const c of children) expect(c.out(), 'child did not get ready').toContain('ready');
      // All at once: the processes are loaded, so their migrations overlap.
      for (const c of children) c.child.stdin!.end('go\n');
      const codes = await Promise.all(children.map((c) => c.exited));
      expect(codes, children.map((c) => c.out()).join('\n---\n')).toEqual(Array(PROCESSES).fill(0));
      const applied = children.map((c) => (JSON.parse(c.out().split('\n')[1]!) as { applied: string[] }).applied);
      expect(applied.flat().sort()).toEqual(Object.keys(MIGRATIONS).sort());
      const db = new Database(path, { readonly: true });
      try {
        const rows = db.prepare('select name from kysely_migration order by name').all() as { name: string }[];
        expect(rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS).sort());
      } finally {
        db.close();
      }
    } finally {
      for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
    }
  });
});

describe('two connections migrating one fresh SQLite file at once in one process', () => {
  it('take turns: both succeed, each migration is applied once', async () => {
    // Their statements interleave at every await, as two processes' would: without the lock both
    // found every migration pending and the second failed on "table merchants already exists".
    const path = join(dir, 'two.db');
    const a = openDatabase({ dialect: 'sqlite', path });
    const b = openDatabase({ dialect: 'sqlite', path });
    try {
      const [first, second] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
      expect([...first, ...second].sort()).toEqual(Object.keys(MIGRATIONS).sort());
      expect(await migrateToLatest(b)).toEqual([]);
      // The busy timeout is put back once the lock is held.
      expect(a.sqlite!.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(b.sqlite!.pragma('busy_timeout', { simple: true })).toBe(5000);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe.runIf(process.env.TEST_PG_URL)('two pools migrating one fresh PostgreSQL schema at once', () => {
  it('take turns (Kysely holds an advisory lock there): both succeed, each migration is applied once', async () => {
    const pg = await freshPostgresUrl();
    const a = openDatabase({ dialect: 'postgres', url: pg.url });
    const b = openDatabase({ dialect: 'postgres', url: pg.url });
    try {
      const [first, second] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
      expect([...first, ...second].sort()).toEqual(Object.keys(MIGRATIONS).sort());
    } finally {
      await a.close();
      await b.close();
      await pg.drop();
    }
  });
});

// The resource-server repository on SQLite and PostgreSQL: insert (a taken client_id is a
// DuplicateRecordError), lookup by client_id, the list oldest first, delete once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateRecordError } from '../src/domain/errors.ts';
import { type OpenStorage, openStorage } from '../src/storage/sql-storage.ts';
import { DIALECTS, freshPostgresUrl } from './harness.ts';

const NOW = Date.UTC(2026, 10, 27);

describe.each(DIALECTS)('resource servers storage on %s', (dialect) => {
  let s: OpenStorage;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    const pg = dialect === 'sqlite' ? undefined : await freshPostgresUrl();
    drop = pg?.drop;
    s = openStorage(pg ? { dialect: 'postgres', url: pg.url } : { dialect: 'sqlite', path: ':memory:' });
    await s.migrate();
  });
  afterAll(async () => {
    await s?.close();
    await drop?.();
  });

  it('inserts, finds by client_id, lists oldest first and deletes once; a taken client_id is refused', async () => {
    const first = await s.resourceServers.insert({ clientId: 'rs_first', name: 'Gateway', secretHash: 'hash-1', now: NOW });
    const second = await s.resourceServers.insert({ clientId: 'rs_second', name: 'Reports', secretHash: 'hash-2', now: NOW + 1 });
    expect(first).toEqual({ id: expect.any(Number), client_id: 'rs_first', name: 'Gateway', secret_hash: 'hash-1', created_at: NOW });
    expect(await s.resourceServers.findByClientId('rs_second')).toEqual(second);
    expect(await s.resourceServers.findByClientId('rs_none')).toBeUndefined();
    await expect(s.resourceServers.insert({ clientId: 'rs_first', name: 'Again', secretHash: 'hash-3', now: NOW })).rejects.toBeInstanceOf(
      DuplicateRecordError,
    );
    expect((await s.resourceServers.list()).map((r) => r.client_id)).toEqual(['rs_first', 'rs_second']);
    expect(await s.resourceServers.delete('rs_first')).toBe(true);
    expect(await s.resourceServers.delete('rs_first')).toBe(false);
    expect(await s.resourceServers.findByClientId('rs_first')).toBeUndefined();
    expect(await s.resourceServers.list()).toEqual([second]);
  });
});

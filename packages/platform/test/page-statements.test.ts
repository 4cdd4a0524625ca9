// A list page costs one call to storage (KeysetSource.window), one statement when no time range is
// asked: the first page reads limit + 1 rows (the extra row says whether a next page exists), and a
// page after a cursor or before one reads its rows and the probe for the page on the other side
// together, in both pagination conventions.
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../src/domain/cursor.ts';
import { linkedKeysetPage, type PageRequest } from '../src/services/pagination.ts';
import type { KeysetQuery, KeysetSource } from '../src/storage/ports/keyset-source.ts';

type Row = { id: number };

/** Rows 1..n of one store, counting the statements asked of it. */
function source(n: number): KeysetSource<Row> & { calls: string[] } {
  const rows = Array.from({ length: n }, (_, i) => ({ id: i + 1 }));
  const calls: string[] = [];
  return {
    calls,
    async after(_q: KeysetQuery, after: number | undefined, limit: number) {
      calls.push('after');
      return rows.filter((r) => after === undefined || r.id > after).slice(0, limit);
    },
    async before(_q: KeysetQuery, before: number, limit: number) {
      calls.push('before');
      return rows
        .filter((r) => r.id < before)
        .reverse()
        .slice(0, limit);
    },
    async window(_q: KeysetQuery, side: 'after' | 'before', from: number | undefined, limit: number) {
      calls.push('window');
      const page =
        side === 'after'
          ? rows.filter((r) => from === undefined || r.id > from).slice(0, limit)
          : rows
              .filter((r) => from === undefined || r.id < from)
              .reverse()
              .slice(0, limit);
      const behind = from !== undefined && rows.some((r) => (side === 'after' ? r.id <= from : r.id >= from));
      return { rows: page, behind };
    },
    async count() {
      calls.push('count');
      return rows.length;
    },
  };
}

const codec = new CursorCodec(Buffer.alloc(32, 5));
const scope = { storeId: 1, resource: 'products' };
const walk = async (convention: PageRequest['convention']) => {
  const s = source(7);
  const req = (cursor?: string, preCursor?: string): PageRequest => ({ limit: 3, cursor, preCursor, convention });
  const first = await linkedKeysetPage(s, codec, scope, req(), (r) => r.id);
  const second = await linkedKeysetPage(s, codec, scope, req(first.next), (r) => r.id);
  const third = await linkedKeysetPage(s, codec, scope, req(second.next), (r) => r.id);
  const back =
    convention === 'older'
      ? await linkedKeysetPage(s, codec, scope, req(undefined, third.previous!), (r) => r.id)
      : await linkedKeysetPage(s, codec, scope, req(third.previous!), (r) => r.id);
  return { s, pages: [first, second, third, back] };
};

describe('one statement per list page', () => {
  for (const convention of ['newer', 'older'] as const) {
    it(`${convention} convention: forward, then back, each page one call to storage`, async () => {
      const { s, pages } = await walk(convention);
      expect(s.calls).toEqual(['window', 'window', 'window', 'window']);
      expect(pages.map((p) => p.envelope.data)).toEqual([[1, 2, 3], [4, 5, 6], [7], [4, 5, 6]]);
      // Links either side are still right: none before the first page, none after the last.
      expect(pages.map((p) => [p.previous !== null, p.next !== ''])).toEqual([
        [false, true],
        [true, true],
        [true, false],
        [true, true],
      ]);
    });
  }
});

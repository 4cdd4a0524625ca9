// Cursors that carry a time beside the id (lists ordered by time, then id): the pair round-trips,
// is signed like the id alone, and never passes for a cursor of another shape or list.
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../src/domain/cursor.ts';
import { InvalidCursorError } from '../src/domain/errors.ts';

const codec = new CursorCodec(Buffer.alloc(32, 7));
const at = Date.UTC(2026, 10, 20, 9, 0, 0);
const expect1 = { storeId: 3, resource: 'events:app:9', direction: 'next' as const };

describe('cursor positions with a time', () => {
  it('round-trips the time with the id; cursors without one decode as before', () => {
    expect(codec.decode(codec.encode({ ...expect1, id: 41, at }), expect1)).toEqual({ ...expect1, id: 41, at });
    expect(codec.decode(codec.encode({ ...expect1, id: 41 }), expect1)).toEqual({ ...expect1, id: 41 });
  });
  it('refuses an altered time, another list or store, and extra parts', () => {
    const good = codec.encode({ ...expect1, id: 41, at });
    const [payload, mac] = good.split('.');
    const altered = Buffer.from(
      Buffer.from(payload!, 'base64url')
        .toString()
        .replace(String(at), String(at - 1)),
    ).toString('base64url');
    expect(() => codec.decode(`${altered}.${mac}`, expect1)).toThrow(InvalidCursorError);
    expect(() => codec.decode(good, { ...expect1, resource: 'events:app:10' })).toThrow('another list');
    expect(() => codec.decode(good, { ...expect1, storeId: 4 })).toThrow('another list');
    const extra = codec.encode({ ...expect1, id: 41, resource: 'events:app:9', at: `${at}|5` as unknown as number });
    expect(() => codec.decode(extra, expect1)).toThrow('malformed');
    const notANumber = codec.encode({ ...expect1, id: 41, at: 'x' as unknown as number });
    expect(() => codec.decode(notANumber, expect1)).toThrow('malformed');
  });
});

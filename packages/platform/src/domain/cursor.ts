// Opaque keyset cursors: a position (the last or first id seen), a direction, the store and
// resource they belong to, and a digest of the list's filters, signed so a tampered or foreign
// cursor is refused, and one issued for other filters too (it would page through another list). A position rather
// than an offset, so a deep page costs what the first one does, and rows added or removed meanwhile
// are neither skipped nor repeated.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from './errors.ts';

export type Direction = 'next' | 'prev';

export interface CursorPosition {
  storeId: number;
  resource: string;
  direction: Direction;
  /** Exclusive bound: `next` pages have ids above it, `prev` pages ids below it. */
  id: number;
  /**
   * For lists ordered by time then id: the time (unix ms) of the row at `id`. The pair is the
   * position, so a list can start inside a time window without walking the rows before it.
   */
  at?: number;
  /** Digest of the row filters the cursor was issued for; '' (or absent) for an unfiltered list. */
  filters?: string;
}

const VERSION = 'c1';
const MAC_BYTES = 16;

export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(p: CursorPosition): string {
    // Optional parts follow the id: the time (digits), then the filter digest tagged with `f` (so
    // the two never read as each other). An unfiltered cursor keeps the form it had before filters.
    const at = p.at === undefined ? '' : `|${p.at}`;
    const digest = p.filters ? `|f${p.filters}` : '';
    const payload = `${VERSION}|${p.storeId}|${p.resource}|${p.direction === 'next' ? 'n' : 'p'}|${p.id}${at}${digest}`;
    return `${Buffer.from(payload).toString('base64url')}.${this.mac(payload).toString('base64url')}`;
  }

  /**
   * Decodes a cursor for `storeId`, `resource` and the filter digest `filters` (default ''), in
   * `direction` ('any' takes either); anything else is an InvalidCursorError.
   */
  decode(cursor: string, expect: { storeId: number; resource: string; direction: Direction | 'any'; filters?: string }): CursorPosition {
    if (cursor.length > 200) throw new InvalidCursorError('cursor is too long');
    const dot = cursor.indexOf('.');
    if (dot <= 0 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError('cursor is malformed');
    const payloadBytes = Buffer.from(cursor.slice(0, dot), 'base64url');
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    // Only the canonical encoding is accepted: base64url's last character carries unused bits, so
    // other spellings of the same bytes exist and would otherwise slip through as "the same cursor".
    if (payloadBytes.toString('base64url') !== cursor.slice(0, dot) || given.toString('base64url') !== cursor.slice(dot + 1)) {
      throw new InvalidCursorError('cursor is malformed');
    }
    const payload = payloadBytes.toString('utf8');
    const expected = this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new InvalidCursorError('cursor is malformed or was altered');
    const [version, store, resource, dir, id, ...optional] = payload.split('|');
    const filters = optional.at(-1)?.startsWith('f') ? optional.pop()!.slice(1) : '';
    const [at, ...rest] = optional;
    if (version !== VERSION || !store || !resource || !dir || !id || !/^\d{1,18}$/.test(id) || rest.length > 0)
      throw new InvalidCursorError('cursor is malformed');
    if (at !== undefined && !/^\d{1,15}$/.test(at)) throw new InvalidCursorError('cursor is malformed');
    if (Number(store) !== expect.storeId || resource !== expect.resource) throw new InvalidCursorError('cursor belongs to another list');
    if (filters !== (expect.filters ?? ''))
      throw new InvalidCursorError('cursor was issued for other filters; send the same filters as the request that returned it');
    const direction: Direction = dir === 'n' ? 'next' : 'prev';
    if (expect.direction !== 'any' && direction !== expect.direction)
      throw new InvalidCursorError(direction === 'next' ? 'this is a cursor, not a pre_cursor' : 'this is a pre_cursor, not a cursor');
    return {
      storeId: expect.storeId,
      resource,
      direction,
      id: Number(id),
      ...(at === undefined ? {} : { at: Number(at) }),
      ...(filters ? { filters } : {}),
    };
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

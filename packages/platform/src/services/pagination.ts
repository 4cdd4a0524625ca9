// Keyset pagination in both conventions of the Admin API: `cursor` + `has_more` (newer versions)
// and `cursor` + `pre_cursor` (2022-01, which can also page backwards). Never an offset.
import type { PaginationConvention } from '../domain/api-versions.ts';
import { type CursorCodec, InvalidCursorError } from '../domain/cursor.ts';
import { InvalidCursor } from '../domain/errors.ts';
import type { KeysetQuery, KeysetSource } from '../storage/ports.ts';

export interface PageRequest {
  limit: number;
  cursor: string | undefined;
  preCursor: string | undefined;
  convention: PaginationConvention;
}

export type PageEnvelope<T> = { data: T[]; cursor: string; has_more: boolean } | { data: T[]; cursor: string; pre_cursor: string | null };

export { InvalidCursor };

export async function keysetPage<R extends { id: number }, T>(
  source: KeysetSource<R>,
  codec: CursorCodec,
  scope: KeysetQuery & { resource: string },
  req: PageRequest,
  toJson: (row: R) => T,
): Promise<PageEnvelope<T>> {
  let after: number | undefined;
  let before: number | undefined;
  try {
    if (req.cursor !== undefined && req.cursor !== '')
      after = codec.decode(req.cursor, { storeId: scope.storeId, resource: scope.resource, direction: 'next' }).id;
    if (req.preCursor !== undefined && req.preCursor !== '')
      before = codec.decode(req.preCursor, { storeId: scope.storeId, resource: scope.resource, direction: 'prev' }).id;
  } catch (err) {
    if (err instanceof InvalidCursorError) throw new InvalidCursor(err.message);
    throw err;
  }
  if (after !== undefined && before !== undefined) throw new InvalidCursor('send either cursor or pre_cursor, not both');
  const enc = (direction: 'next' | 'prev', id: number) => codec.encode({ storeId: scope.storeId, resource: scope.resource, direction, id });

  if (before !== undefined) {
    // Backwards (older convention): the page just before `before`, returned in ascending order.
    const rows = await source.before(scope, before, req.limit + 1);
    const hasBefore = rows.length > req.limit;
    const page = rows.slice(0, req.limit).reverse();
    const last = page.at(-1)?.id ?? before - 1;
    return {
      data: page.map(toJson),
      cursor: (await source.exists(scope, '>', last)) ? enc('next', last) : '',
      pre_cursor: hasBefore ? enc('prev', page[0]!.id) : null,
    };
  }

  const rows = await source.after(scope, after, req.limit + 1);
  const hasMore = rows.length > req.limit;
  const page = rows.slice(0, req.limit);
  const cursor = hasMore ? enc('next', page.at(-1)!.id) : '';
  if (req.convention === 'newer') return { data: page.map(toJson), cursor, has_more: hasMore };
  const first = page[0]?.id ?? (after ?? 0) + 1;
  const preCursor = after === undefined ? null : (await source.exists(scope, '<', first)) ? enc('prev', first) : null;
  return { data: page.map(toJson), cursor, pre_cursor: preCursor };
}

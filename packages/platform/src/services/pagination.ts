// Keyset pagination over (store_id, id) in both conventions of seed §4.5 (PRODUCT.md §6).
// Never an offset: every page is an index range scan, so page 10,000 costs what page 1 costs.
import type { Kysely } from 'kysely';
import type { PaginationConvention } from '../domain/api-versions.ts';
import { InvalidCursorError, type CursorCodec } from '../domain/cursor.ts';
import { PlatformError } from '../errors.ts';

export interface PageRequest {
  limit: number;
  cursor: string | undefined;
  preCursor: string | undefined;
  convention: PaginationConvention;
}

export type PageEnvelope<T> =
  | { data: T[]; cursor: string; has_more: boolean }
  | { data: T[]; cursor: string; pre_cursor: string | null };

export class InvalidCursor extends PlatformError {
  constructor(message: string) {
    super(400, 'InvalidCursor', message);
  }
}

type Row = { id: number } & Record<string, unknown>;

export async function keysetPage<T>(
  db: Kysely<any>,
  codec: CursorCodec,
  table: string,
  scope: { storeId: number; resource: string; where?: [string, string, unknown][] },
  req: PageRequest,
  toJson: (row: any) => T,
): Promise<PageEnvelope<T>> {
  let after: number | undefined;
  let before: number | undefined;
  try {
    if (req.cursor !== undefined && req.cursor !== '') after = codec.decode(req.cursor, { storeId: scope.storeId, resource: scope.resource, direction: 'next' }).id;
    if (req.preCursor !== undefined && req.preCursor !== '') before = codec.decode(req.preCursor, { storeId: scope.storeId, resource: scope.resource, direction: 'prev' }).id;
  } catch (err) {
    if (err instanceof InvalidCursorError) throw new InvalidCursor(err.message);
    throw err;
  }
  if (after !== undefined && before !== undefined) throw new InvalidCursor('send either cursor or pre_cursor, not both');

  const base = () => {
    let q = db.selectFrom(table).selectAll().where('store_id', '=', scope.storeId);
    for (const [col, op, value] of scope.where ?? []) q = q.where(col, op as any, value);
    return q;
  };
  const exists = async (op: '<' | '>', id: number) => (await base().clearSelect().select('id').where('id', op, id).limit(1).executeTakeFirst()) !== undefined;
  const enc = (direction: 'next' | 'prev', id: number) => codec.encode({ storeId: scope.storeId, resource: scope.resource, direction, id });

  if (before !== undefined) {
    // Backwards (older convention): the page just before `before`, returned in ascending order.
    const rows = (await base().where('id', '<', before).orderBy('id', 'desc').limit(req.limit + 1).execute()) as Row[];
    const hasBefore = rows.length > req.limit;
    const page = rows.slice(0, req.limit).reverse();
    const last = page.at(-1)?.id ?? before - 1;
    return {
      data: page.map(toJson),
      cursor: (await exists('>', last)) ? enc('next', last) : '',
      pre_cursor: hasBefore ? enc('prev', page[0]!.id) : null,
    };
  }

  let q = base();
  if (after !== undefined) q = q.where('id', '>', after);
  const rows = (await q.orderBy('id', 'asc').limit(req.limit + 1).execute()) as Row[];
  const hasMore = rows.length > req.limit;
  const page = rows.slice(0, req.limit);
  const cursor = hasMore ? enc('next', page.at(-1)!.id) : '';
  if (req.convention === 'newer') return { data: page.map(toJson), cursor, has_more: hasMore };
  const first = page[0]?.id ?? (after ?? 0) + 1;
  const preCursor = after === undefined ? null : (await exists('<', first)) ? enc('prev', first) : null;
  return { data: page.map(toJson), cursor, pre_cursor: preCursor };
}

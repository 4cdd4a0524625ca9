// Keyset pagination in both conventions of the Admin API: `cursor` + `has_more` (newer versions)
// and `cursor` + `pre_cursor` (2022-01, which can also page backwards). Never an offset. A list's
// filters narrow the rows of every page; its cursors carry a digest of them, so a cursor only
// continues the list it came from.
import type { PaginationConvention } from '../domain/api-versions.ts';
import type { CursorCodec, Direction } from '../domain/cursor.ts';
import { InvalidCursor, InvalidCursorError } from '../domain/errors.ts';
import { filterDigest, type ListFilters } from '../domain/list-filters.ts';
import type { JsonPage } from '../storage/ports/json-page.ts';
import type { KeysetQuery, KeysetSource } from '../storage/ports/keyset-source.ts';

export interface PageRequest {
  limit: number;
  cursor: string | undefined;
  preCursor: string | undefined;
  convention: PaginationConvention;
  /** Row filters (ids, since_id, time ranges); none when absent. */
  filters?: ListFilters;
}

export type PageEnvelope<T> = { data: T[]; cursor: string; has_more: boolean } | { data: T[]; cursor: string; pre_cursor: string | null };

/** A page, and the cursors of the pages either side of it (for `Link` headers). */
export interface LinkedPage<T> {
  envelope: PageEnvelope<T>;
  /** Cursor of the next page ('' when this is the last). */
  next: string;
  /**
   * Cursor of the previous page, null on the first. In the older convention it is sent as
   * `pre_cursor`; in the newer ones as `cursor` (which takes either direction there).
   */
  previous: string | null;
}

export { InvalidCursor };

export async function keysetPage<R extends { id: number }, T>(
  source: KeysetSource<R>,
  codec: CursorCodec,
  scope: KeysetQuery & { resource: string },
  req: PageRequest,
  toJson: (row: R) => T,
): Promise<PageEnvelope<T>> {
  return (await linkedKeysetPage(source, codec, scope, req, toJson)).envelope;
}

export async function linkedKeysetPage<R extends { id: number }, T>(
  source: KeysetSource<R>,
  codec: CursorCodec,
  scope: KeysetQuery & { resource: string },
  req: PageRequest,
  toJson: (row: R) => T,
): Promise<LinkedPage<T>> {
  const query: KeysetQuery = { ...scope, ...(req.filters ? { filters: req.filters } : {}) };
  const { after, before, enc } = cursorBounds(codec, scope, req);

  if (before !== undefined) {
    // Backwards: the page just before `before`, returned in ascending order.
    // Rows after this page exist exactly when a row at or after `before` does (none lies between
    // the page's last row and `before`), which the same call tells.
    const { rows, behind, stoppedAt } = await source.window(query, 'before', before, req.limit + 1);
    const page = rows.slice(0, req.limit).reverse();
    const last = page.at(-1)?.id ?? before - 1;
    const next = behind ? enc('next', last) : '';
    // A page that stopped short (a time range matching few of the rows it may read) continues
    // below the last row it examined.
    const previous = rows.length > req.limit ? enc('prev', page[0]!.id) : stoppedAt !== undefined ? enc('prev', stoppedAt) : null;
    const data = page.map(toJson);
    const envelope =
      req.convention === 'newer' ? { data, cursor: next, has_more: next !== '' } : { data, cursor: next, pre_cursor: previous };
    return { envelope, next, previous };
  }

  // limit + 1 rows tell whether a next page exists; after a cursor, rows before this page exist
  // exactly when a row at or before the cursor's id does. A page that stopped short continues
  // after the last row it examined.
  const { rows, behind, stoppedAt } = await source.window(query, 'after', after, req.limit + 1);
  const page = rows.slice(0, req.limit);
  const next = rows.length > req.limit ? enc('next', page.at(-1)!.id) : stoppedAt !== undefined ? enc('next', stoppedAt) : '';
  const hasMore = next !== '';
  const first = page[0]?.id ?? (after ?? 0) + 1;
  const previous = behind ? enc('prev', first) : null;
  const data = page.map(toJson);
  if (req.convention === 'newer') return { envelope: { data, cursor: next, has_more: hasMore }, next, previous };
  return { envelope: { data, cursor: next, pre_cursor: previous }, next, previous };
}

/** Where a page starts (the decoded cursor), and how its cursors are minted. */
function cursorBounds(codec: CursorCodec, scope: KeysetQuery & { resource: string }, req: PageRequest) {
  const filters = filterDigest(req.filters ?? {});
  let after: number | undefined;
  let before: number | undefined;
  const decode = (cursor: string, direction: Direction | 'any') =>
    codec.decode(cursor, { storeId: scope.storeId, resource: scope.resource, direction, filters });
  try {
    if (req.cursor !== undefined && req.cursor !== '') {
      // The newer convention has no pre_cursor parameter: its `previous` links send a backwards
      // cursor as `cursor`.
      const at = decode(req.cursor, req.convention === 'newer' ? 'any' : 'next');
      if (at.direction === 'next') after = at.id;
      else before = at.id;
    }
    if (req.preCursor !== undefined && req.preCursor !== '') {
      if (before !== undefined) throw new InvalidCursorError('send either cursor or pre_cursor, not both');
      before = decode(req.preCursor, 'prev').id;
    }
  } catch (err) {
    if (err instanceof InvalidCursorError) throw new InvalidCursor(err.message);
    throw err;
  }
  if (after !== undefined && before !== undefined) throw new InvalidCursor('send either cursor or pre_cursor, not both');
  const enc = (direction: 'next' | 'prev', id: number) =>
    codec.encode({ storeId: scope.storeId, resource: scope.resource, direction, id, filters });
  return { after, before, enc };
}

/** A page's body as the JSON text of an envelope, and the cursors either side (for `Link`). */
export interface TextPage {
  body: string;
  next: string;
  previous: string | null;
}

/**
 * The same page as linkedKeysetPage, of a list without filters, from objects the database wrote
 * as JSON (`read`); the envelope around them is written here, byte for byte as JSON.stringify
 * writes the one linkedKeysetPage returns. Undefined when `read` answers undefined.
 */
export async function linkedTextPage(
  codec: CursorCodec,
  scope: KeysetScopeOf,
  req: PageRequest,
  read: (q: TextPagePlan['read']) => Promise<JsonPage | undefined>,
): Promise<TextPage | undefined> {
  const plan = textPagePlan(codec, scope, req);
  const page = await read(plan.read);
  return page && plan.finish(page);
}

/** What a page written by the database reads, and the envelope written around it once read. */
export interface TextPagePlan {
  read: { side: 'after' | 'before'; from: number | undefined; limit: number };
  finish(page: JsonPage): TextPage;
}

/**
 * The two halves of linkedTextPage, for a caller that reads the page itself: the cursors are
 * decoded here, before anything is read (an InvalidCursor is thrown at once).
 */
export function textPagePlan(codec: CursorCodec, scope: KeysetScopeOf, req: PageRequest): TextPagePlan {
  const { after, before, enc } = cursorBounds(codec, scope, req);
  const envelope = (objects: string, next: string, previous: string | null): TextPage => {
    const tail =
      req.convention === 'newer' ? `"has_more":${next !== ''}` : `"pre_cursor":${previous === null ? 'null' : JSON.stringify(previous)}`;
    return { body: `{"data":[${objects}],"cursor":${JSON.stringify(next)},${tail}}`, next, previous };
  };
  if (before !== undefined) {
    return {
      read: { side: 'before', from: before, limit: req.limit },
      finish: (page) =>
        envelope(page.objects, page.behind ? enc('next', page.last ?? before - 1) : '', page.more ? enc('prev', page.first!) : null),
    };
  }
  return {
    read: { side: 'after', from: after, limit: req.limit },
    finish: (page) =>
      envelope(page.objects, page.more ? enc('next', page.last!) : '', page.behind ? enc('prev', page.first ?? (after ?? 0) + 1) : null),
  };
}

type KeysetScopeOf = KeysetQuery & { resource: string };

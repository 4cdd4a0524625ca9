// The page a list request asks for, read from its query by hand, before the query is validated
// (validation comes after the Admin API's token, rate and scope checks, and a page read with the
// token must not wait for it). Only a query of page parameters that validation would accept as
// they are is read here, each the way pageRequest reads it after validation: limits of digits in
// the schema's range, cursors of the schema's length, a pre_cursor only where the version takes
// one. Anything else (a filter, `fields`, a repeated or odd parameter) answers undefined, and the
// request is checked and read the usual way.
import { API_VERSIONS, type ApiVersion } from '../../domain/api-versions.ts';
import type { PageRequest } from '../../services/pagination.ts';
import { DEFAULT_PAGE_SIZE, LIST_QUERY } from './api-common.ts';

const { limit: SIZE, cursor: CURSOR } = LIST_QUERY.properties;
const DIGITS = /^[0-9]{1,9}$/;

/** The page request of a query holding only valid page parameters; undefined for any other query. */
export function plainPageRequest(query: unknown, version: ApiVersion): PageRequest | undefined {
  const convention = API_VERSIONS[version].pagination;
  const q = (query ?? {}) as Record<string, unknown>;
  const sizes: Partial<Record<'limit' | 'page_size' | 'per_page', number>> = {};
  let cursor: string | undefined;
  let preCursor: string | undefined;
  for (const name of Object.keys(q)) {
    const value = q[name];
    if (typeof value !== 'string') return undefined;
    switch (name) {
      case 'limit':
      case 'page_size':
      case 'per_page': {
        const size = DIGITS.test(value) ? Number(value) : Number.NaN;
        if (!(size >= SIZE.minimum && size <= SIZE.maximum)) return undefined;
        sizes[name] = size;
        break;
      }
      case 'cursor':
        if (value.length > CURSOR.maxLength) return undefined;
        cursor = value;
        break;
      case 'pre_cursor':
        if (convention === 'newer' || value.length > CURSOR.maxLength) return undefined;
        preCursor = value;
        break;
      default:
        return undefined;
    }
  }
  return { limit: sizes.limit ?? sizes.page_size ?? sizes.per_page ?? DEFAULT_PAGE_SIZE, cursor, preCursor, convention };
}

// A list page without filters whose objects the database writes as JSON (repositories/json-page.ts).

/** A page without filters, `limit` rows at most on `side` of `from` (the store's first rows without it). */
export interface JsonPageQuery {
  storeId: number;
  side: 'after' | 'before';
  from: number | undefined;
  limit: number;
}

/** A page's objects as JSON text, written by the database (storage/repositories/json-page.ts). */
export interface JsonPage {
  /** The objects in id order, comma-joined ('' for none): the inside of the `data` array. */
  objects: string;
  count: number;
  first: number | null;
  last: number | null;
  /** Rows lie past the page's far end (after its last row going forward, before its first going back). */
  more: boolean;
  /** Rows lie behind `from` (at or before it going forward, at or after it going back). */
  behind: boolean;
}

// Apps as this process last read them, by client_id, so that a grant's client can be judged
// without first reading the app (GrantStore.knownApp). A copy here is never trusted on its own: the
// grant runs only while the app row is still the approved copy (SQLite compares its columns inside
// the grant's batch entry; PostgreSQL's statement compares the version stamp the copy was read
// with, see pg-grants.ts) and changes nothing otherwise, so an entry can be as old as it likes and
// there is no expiry. Bounded, so client_ids presented by anyone cannot grow it without limit; the
// least recently used entry makes room.
import type { AppRow } from './ports/rows.ts';
import { APP_COLUMNS } from './repositories/prepared-statements.ts';

/** Whether two reads of an app hold the same values in every column the services see. */
export function sameApp(a: AppRow, b: AppRow): boolean {
  return APP_COLUMNS.every((c) => a[c] === b[c]);
}

export class AppRowCache {
  private readonly rows = new Map<string, AppRow>();

  constructor(private readonly capacity = 1024) {}

  get(clientId: string): AppRow | undefined {
    const row = this.rows.get(clientId);
    if (row === undefined) return undefined;
    // Moved to the back of the Map's order: the front holds the least recently used.
    this.rows.delete(clientId);
    this.rows.set(clientId, row);
    return row;
  }

  /** Keeps the row read for `clientId`, or forgets the client_id when no app has it. */
  set(clientId: string, row: AppRow | undefined): void {
    this.rows.delete(clientId);
    if (row === undefined) return;
    if (this.rows.size >= this.capacity) {
      const oldest = this.rows.keys().next();
      if (!oldest.done) this.rows.delete(oldest.value);
    }
    this.rows.set(clientId, row);
  }
}

// A cache of serialized list pages for the embedded SQLite mode, validated on every hit: an entry
// is served only while the database is provably unchanged since it was rendered — no writing
// statement run on this process's connection (counted as Kysely runs them) and no commit by any
// other connection or process (PRAGMA data_version). So a hit is never stale; any write anywhere
// simply empties it.
// PostgreSQL deployments (several nodes) do not use it.
import type SQLite from 'better-sqlite3';

export class PageCache {
  private readonly entries = new Map<string, string>();
  private bytes = 0;
  private version = '';
  private readonly versionQuery: SQLite.Statement;

  constructor(
    sqlite: SQLite.Database,
    private readonly localWrites: () => number,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {
    this.versionQuery = sqlite.prepare('pragma data_version').pluck();
  }

  // PRAGMA data_version costs a read transaction; it is read once per turn of the event loop and
  // shared by the requests handled in that turn. Those requests were all received before the turn
  // began (libuv collects ready sockets first), so a version read during the turn is a moment
  // inside each of them. Local writes are counted exactly, without any query.
  private dataVersion: number | undefined;

  private current(): string {
    if (this.dataVersion === undefined) {
      this.dataVersion = this.versionQuery.get() as number;
      setImmediate(() => {
        this.dataVersion = undefined;
      });
    }
    return `${this.dataVersion}:${this.localWrites()}`;
  }

  /**
   * The cached body for `key`, if the database has not changed since it was stored. `now` is the
   * version to judge by (default: read it now); a request passes the one read on its arrival.
   */
  get(key: string, now = this.current()): string | undefined {
    if (now !== this.version) {
      this.entries.clear();
      this.bytes = 0;
      this.version = now;
      return undefined;
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Stores a body rendered from the state seen by `versionBefore` (taken before the read). */
  set(key: string, body: string, versionBefore: string): void {
    if (versionBefore !== this.current() || body.length > this.maxBytes / 8) return;
    if (versionBefore !== this.version) {
      this.entries.clear();
      this.bytes = 0;
      this.version = versionBefore;
    }
    this.entries.set(key, body);
    this.bytes += body.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.length;
    }
  }

  /** The version to pass to `set` for a page about to be read. */
  snapshot(): string {
    return this.current();
  }
}

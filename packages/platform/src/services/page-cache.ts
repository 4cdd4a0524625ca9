// A cache of rendered list pages, validated on every hit: an entry is served only while the
// database is provably unchanged since it was rendered (storage's change stamp is the same), so a
// hit is never stale; any write anywhere simply empties it. Where storage cannot tell (several
// nodes on PostgreSQL) the stamp is undefined and nothing is cached. Pages are kept as the bytes
// sent (a Buffer), so a hit costs neither a UTF-8 encoding nor a length count.

export interface CachedPage {
  body: Buffer;
  next: string;
  previous: string | null;
}

export class PageCache<T extends { body: { length: number } } = CachedPage> {
  private readonly entries = new Map<string, T>();
  private bytes = 0;
  private version = '';

  constructor(
    private readonly stamp: () => string | undefined,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  /** The stamp to render a page against, or undefined when pages cannot be cached. */
  snapshot(): string | undefined {
    return this.stamp();
  }

  /** The cached page for `key`, if the database has not changed since it was stored. */
  get(key: string, now = this.stamp()): T | undefined {
    if (now === undefined) return undefined;
    if (now !== this.version) {
      this.entries.clear();
      this.bytes = 0;
      this.version = now;
      return undefined;
    }
    return this.entries.get(key);
  }

  /** Stores a page rendered from the state seen by `versionBefore` (taken before the read). */
  set(key: string, page: T, versionBefore: string | undefined): void {
    const size = page.body.length;
    if (versionBefore === undefined || versionBefore !== this.stamp() || size > this.maxBytes / 8) return;
    if (versionBefore !== this.version) {
      this.entries.clear();
      this.bytes = 0;
      this.version = versionBefore;
    }
    const old = this.entries.get(key);
    if (old) this.bytes -= old.body.length;
    this.entries.set(key, page);
    this.bytes += size;
    // Oldest first out: a Map iterates in insertion order.
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.body.length;
    }
  }
}

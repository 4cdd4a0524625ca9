// A cache of serialized list pages, validated on every hit: an entry is served only while the
// database is provably unchanged since it was rendered (storage's change stamp is the same), so a
// hit is never stale; any write anywhere simply empties it. Where storage cannot tell (several
// nodes on PostgreSQL) the stamp is undefined and nothing is cached.

export class PageCache {
  private readonly entries = new Map<string, string>();
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

  /** The cached body for `key`, if the database has not changed since it was stored. */
  get(key: string, now = this.stamp()): string | undefined {
    if (now === undefined) return undefined;
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
  set(key: string, body: string, versionBefore: string | undefined): void {
    if (versionBefore === undefined || versionBefore !== this.stamp() || body.length > this.maxBytes / 8) return;
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
}

// SQLite's answer to "may the data have changed since?": writes on this process's connection are
// counted exactly as they run, and commits by any other connection or process move PRAGMA
// data_version. The pair changes whenever the data may have; caches keyed by it are never stale.
//
// PRAGMA data_version costs a read transaction, so it is read once per turn of the event loop and
// shared by the requests handled in that turn. Those requests were all received before the turn
// began (libuv collects ready sockets first), so a version read during the turn is a moment inside
// each of them.

/** What is read of the connection: one statement (sqlite-handle.ts's handle, or better-sqlite3's). */
interface VersionSource {
  prepare(source: string): { get(): unknown };
}

export function sqliteChangeStamp(sqlite: VersionSource, localWrites: () => number): () => string {
  const versionQuery = sqlite.prepare('pragma data_version');
  let dataVersion: number | undefined;
  // The last stamp handed out, rebuilt only when one of its two numbers moved (it is asked for
  // several times per request).
  let stamp = '';
  let stampVersion = -1;
  let stampWrites = -1;
  return () => {
    if (dataVersion === undefined) {
      dataVersion = (versionQuery.get() as { data_version: number }).data_version;
      setImmediate(() => {
        dataVersion = undefined;
      });
    }
    const writes = localWrites();
    if (dataVersion !== stampVersion || writes !== stampWrites) {
      stampVersion = dataVersion;
      stampWrites = writes;
      stamp = `${dataVersion}:${writes}`;
    }
    return stamp;
  };
}

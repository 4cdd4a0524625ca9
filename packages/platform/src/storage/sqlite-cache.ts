// How much of the database SQLite keeps in the process's own memory. better-sqlite3 builds SQLite
// with a 16 MiB page cache per connection; the kernel's page cache already holds the file, so a
// page SQLite no longer has costs one pread of a page the kernel has in memory, not a disk read.
// At 4 MiB the token and list benchmarks move no more than from one run to the next, and a node
// under steady writes stops growing its resident memory with the database (bench/README.md,
// memory and soak).
import type SQLite from 'better-sqlite3';

/** SQLite's page cache per connection, in KiB (a negative cache_size counts KiB, not pages). */
export const SQLITE_CACHE_KIB = 4096;

export function limitPageCache(sqlite: SQLite.Database): void {
  sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
}

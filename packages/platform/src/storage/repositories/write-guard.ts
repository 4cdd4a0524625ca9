// The conditions of a conditional write, added to the WHERE clause of its UPDATE or DELETE: the row
// is changed only while it still holds the version (and inventory quantity) the caller expects.
// Being part of the one statement, the check and the write cannot be split by another writer: on
// PostgreSQL a concurrent UPDATE waits for the first to commit and then re-reads the row against
// the same conditions; SQLite runs one write transaction at a time.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { WriteGuard } from '../ports/write-condition.ts';

export function guarded<Q extends { where(expression: Expression<SqlBool>): Q }>(query: Q, guard: WriteGuard | undefined): Q {
  let q = query;
  const versions = guard?.versions;
  if (versions !== undefined) {
    // No tag of this record was listed: no row may change (an empty IN list is not SQL).
    q = versions.length === 0 ? q.where(sql<SqlBool>`1 = 0`) : q.where(sql<SqlBool>`version in (${sql.join(versions.map(Number))})`);
  }
  if (guard?.inventoryQuantity !== undefined) q = q.where(sql<SqlBool>`inventory_quantity = ${guard.inventoryQuantity}`);
  return q;
}

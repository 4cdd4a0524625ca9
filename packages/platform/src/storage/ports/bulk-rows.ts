// Many new records of a store written at once (seeding fake data): the fastest way each database
// takes rows in, behind one method.
import type { Database } from '../schema.ts';

/** The store tables that are filled in bulk. */
export type BulkTable = 'products' | 'customers' | 'orders';

/** A new record of `T`: every column but those the database fills (id, version). */
export type NewRecord<T extends BulkTable> = Omit<Database[T], 'id' | 'version'>;

export interface BulkRows {
  /**
   * Inserts `rows` in one transaction: all of them, or none when one fails. Ids come from the
   * table's own sequence, as for any other insert, so later inserts carry on after them.
   * Returns how many rows were inserted.
   */
  insert<T extends BulkTable>(table: T, rows: Iterable<NewRecord<T>>): Promise<number>;
}

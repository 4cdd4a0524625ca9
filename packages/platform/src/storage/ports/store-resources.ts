// The port on a store's resources (products, orders, customers): pages, reads and conditional writes.
import type { ResourceName } from '../../domain/resources.ts';
import type { WriteGuard } from './write-condition.ts';
import type { JsonPage, JsonPageQuery } from './json-page.ts';
import type { KeysetSource } from './keyset-source.ts';
import type { ResourceRow } from './rows.ts';

export interface ResourceRepository {
  page(resource: ResourceName): KeysetSource<ResourceRow>;
  /**
   * The page as JSON in the shape of the resource's `jsonFields`, or undefined when the database
   * cannot write it exactly as ResourceDef.toJson would (then read it as rows).
   */
  jsonPage(resource: ResourceName, q: JsonPageQuery): Promise<JsonPage | undefined>;
  get(resource: ResourceName, storeId: number, id: number): Promise<ResourceRow | undefined>;
  /** Throws DuplicateRecordError (record: the resource name) when a unique key is taken: a customer's email in its store. */
  insert(resource: ResourceName, values: Record<string, unknown>): Promise<ResourceRow>;
  /**
   * Sets `values` and adds one to the row's version, only while the row still meets `guard` (checked
   * in the statement itself, so two writers with the same guard cannot both pass); undefined when
   * no row was changed. Throws DuplicateRecordError like `insert`.
   */
  update(
    resource: ResourceName,
    storeId: number,
    id: number,
    values: Record<string, unknown>,
    guard?: WriteGuard,
  ): Promise<ResourceRow | undefined>;
  /** Deletes the row while it still meets `guard`; undefined when no row was deleted. */
  delete(resource: ResourceName, storeId: number, id: number, guard?: WriteGuard): Promise<ResourceRow | undefined>;
  exists(resource: ResourceName, storeId: number, id: number): Promise<boolean>;
  customerEmailTaken(storeId: number, email: string, exceptId: number | undefined): Promise<boolean>;
  /** Ids of the store's orders placed by the customer, oldest first. */
  customerOrderIds(storeId: number, customerId: number): Promise<number[]>;
  /**
   * Replaces what identifies a customer (email, names, phone) with placeholders, in the customer
   * record and in the email of its orders. Returns whether the customer exists.
   */
  redactCustomer(storeId: number, customerId: number, placeholderEmail: string, now: number): Promise<boolean>;
  /** The first `limit` customers of a store (seeding orders). */
  someCustomers(storeId: number, limit: number): Promise<{ id: number; email: string }[]>;
}

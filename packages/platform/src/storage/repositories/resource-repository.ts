// Store resources (products, orders, customers): rows by id, writes, keyset pages, bulk seeding.
import { sql, type Kysely } from 'kysely';
import type { ResourceName } from '../../domain/resources.ts';
import type { JsonPage, JsonPageQuery } from '../ports/json-page.ts';
import type { KeysetSource } from '../ports/keyset-source.ts';
import type { ResourceRow } from '../ports/rows.ts';
import type { ResourceRepository } from '../ports/store-resources.ts';
import type { WriteGuard } from '../ports/write-condition.ts';
import { refusingDuplicates } from '../unique-violation.ts';
import type { Executor } from './executor.ts';
import { jsonPage } from './json-page.ts';
import { SqlKeysetSource } from './keyset.ts';
import { guarded } from './write-guard.ts';

// The three tables share (id, store_id) and differ in the other columns, which the resource
// definitions (domain/resources.ts) map; here they are plain column values.
type ResourceTables = Record<ResourceName, ResourceRow>;

export class SqlResourceRepository implements ResourceRepository {
  constructor(private readonly x: Executor) {}

  private get k(): Kysely<ResourceTables> {
    return this.x.k as unknown as Kysely<ResourceTables>;
  }

  page(resource: ResourceName): KeysetSource<ResourceRow> {
    return new SqlKeysetSource<ResourceRow>(this.x, resource);
  }

  jsonPage(resource: ResourceName, q: JsonPageQuery): Promise<JsonPage | undefined> {
    return jsonPage(this.x, resource, q);
  }

  get(resource: ResourceName, storeId: number, id: number): Promise<ResourceRow | undefined> {
    return this.k.selectFrom(resource).selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst() as Promise<
      ResourceRow | undefined
    >;
  }

  insert(resource: ResourceName, values: Record<string, unknown>): Promise<ResourceRow> {
    return refusingDuplicates(
      resource,
      () =>
        this.k
          .insertInto(resource)
          .values(values as ResourceRow)
          .returningAll()
          .executeTakeFirstOrThrow() as Promise<ResourceRow>,
    );
  }

  update(
    resource: ResourceName,
    storeId: number,
    id: number,
    values: Record<string, unknown>,
    guard?: WriteGuard,
  ): Promise<ResourceRow | undefined> {
    const update = this.k
      .updateTable(resource)
      .set({ ...values, version: sql`version + 1` })
      .where('store_id', '=', storeId)
      .where('id', '=', id);
    return refusingDuplicates(resource, () => guarded(update, guard).returningAll().executeTakeFirst() as Promise<ResourceRow | undefined>);
  }

  delete(resource: ResourceName, storeId: number, id: number, guard?: WriteGuard): Promise<ResourceRow | undefined> {
    const remove = this.k.deleteFrom(resource).where('store_id', '=', storeId).where('id', '=', id);
    return guarded(remove, guard).returningAll().executeTakeFirst() as Promise<ResourceRow | undefined>;
  }

  async exists(resource: ResourceName, storeId: number, id: number): Promise<boolean> {
    return (
      (await this.k.selectFrom(resource).select('id').where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()) !== undefined
    );
  }

  async customerEmailTaken(storeId: number, email: string, exceptId: number | undefined): Promise<boolean> {
    let q = this.x.k.selectFrom('customers').select('id').where('store_id', '=', storeId).where('email', '=', email);
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  async customerOrderIds(storeId: number, customerId: number): Promise<number[]> {
    const rows = await this.x.k
      .selectFrom('orders')
      .select('id')
      .where('store_id', '=', storeId)
      .where('customer_id', '=', customerId)
      .orderBy('id')
      .execute();
    return rows.map((r) => Number(r.id));
  }

  async redactCustomer(storeId: number, customerId: number, placeholderEmail: string, now: number): Promise<boolean> {
    const res = await this.x.k
      .updateTable('customers')
      .set({ email: placeholderEmail, first_name: '', last_name: '', phone: null, updated_at: now, version: sql`version + 1` })
      .where('store_id', '=', storeId)
      .where('id', '=', customerId)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    await this.x.k
      .updateTable('orders')
      .set({ email: placeholderEmail, updated_at: now, version: sql`version + 1` })
      .where('store_id', '=', storeId)
      .where('customer_id', '=', customerId)
      .execute();
    return true;
  }

  someCustomers(storeId: number, limit: number): Promise<{ id: number; email: string }[]> {
    return this.x.k.selectFrom('customers').select(['id', 'email']).where('store_id', '=', storeId).orderBy('id').limit(limit).execute();
  }
}

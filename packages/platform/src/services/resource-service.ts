// Store resources through the Admin API: pages, get, create, update, delete. Every change writes
// its webhook event in the same transaction (the outbox), so the two never disagree.
import type { Clock } from '../domain/clock.ts';
import type { CursorCodec } from '../domain/cursor.ts';
import {
  ConflictError,
  DuplicateRecordError,
  InventoryQuantityMismatchError,
  NotFoundError,
  PreconditionFailedError,
  ValidationFailedError,
} from '../domain/errors.ts';
import { acceptedVersions, satisfies, type WriteCondition } from '../domain/etags.ts';
import type { ResourceDef } from '../domain/resources.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { ResourceRow } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';
import type { WriteGuard } from '../storage/ports/write-condition.ts';
import type { WriteStep } from './idempotency.ts';
import type { WebhookOutbox } from './webhook-outbox.ts';
import { hasFilters, type ListFilters, selectFields } from '../domain/list-filters.ts';
import { keysetPage, linkedKeysetPage, linkedTextPage, type PageRequest } from './pagination.ts';

/** A list page rendered as its JSON body (UTF-8 bytes), with the cursors of the pages either side (for `Link`). */
export interface RenderedPage {
  body: Buffer;
  next: string;
  previous: string | null;
}

/** A store's product, order or customer, its columns as the resource's toJson reads them. */
export type ResourceRecord = ResourceRow;

export class ResourceService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly outbox: WebhookOutbox,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * One page of a store's resources as a JSON body. Read fresh on every call: a cache of pages
   * that any write empties answered almost nothing where pages vary and some store is always
   * writing, and cost more than it saved (docs/admin-api-performance.md).
   */
  async listPage(def: ResourceDef, storeId: number, page: PageRequest, fields?: readonly string[]): Promise<RenderedPage> {
    const text = await this.textPage(def, storeId, page, fields);
    if (text !== undefined) return { body: Buffer.from(text.body), next: text.next, previous: text.previous };
    const result = await linkedKeysetPage(
      this.storage.resources.page(def.name),
      this.cursors,
      { storeId, resource: def.name },
      page,
      (row) => selectFields(def.toJson(row), fields),
    );
    return { body: Buffer.from(JSON.stringify(result.envelope)), next: result.next, previous: result.previous };
  }

  /**
   * A page without filters or chosen fields, its objects written as JSON by the database (as rows
   * and a serialisation here they cost several times more); undefined where that cannot be done.
   */
  private textPage(def: ResourceDef, storeId: number, page: PageRequest, fields: readonly string[] | undefined) {
    if (def.jsonFields === undefined || fields !== undefined || (page.filters && hasFilters(page.filters))) return undefined;
    const resources = this.storage.resources;
    return linkedTextPage(this.cursors, { storeId, resource: def.name }, page, (q) => resources.jsonPage(def.name, { storeId, ...q }));
  }

  /** One page of a store's resources as API objects (no cache). */
  page(def: ResourceDef, storeId: number, page: PageRequest) {
    return keysetPage(this.storage.resources.page(def.name), this.cursors, { storeId, resource: def.name }, page, (row) => def.toJson(row));
  }

  /** How many of a store's resources match `filters`: an exact count (see KeysetSource.count). */
  count(def: ResourceDef, storeId: number, filters: ListFilters): Promise<number> {
    return this.storage.resources.page(def.name).count({ storeId, filters });
  }

  async get(def: ResourceDef, storeId: number, id: number): Promise<ResourceRow> {
    const row = await this.storage.resources.get(def.name, storeId, id);
    if (!row) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return row;
  }

  // Every write takes an optional `then` step, run in the write's transaction after it: the
  // Admin API stores an idempotent request's response there, so write and answer commit together.
  // Updates and deletes take an optional condition (If-Match, an expected inventory quantity),
  // checked by the write statement itself; when it does not hold nothing changes.

  create(def: ResourceDef, storeId: number, body: Record<string, unknown>, then?: WriteStep<ResourceRow>): Promise<ResourceRow> {
    const values = { ...def.createValues(body, this.clock()), store_id: storeId };
    return this.storage.transaction(async (tx) => {
      await this.checkReferences(tx, def, storeId, values, undefined);
      const row = await emailTakenOnDuplicate(tx.resources.insert(def.name, values));
      await this.outbox.record(tx, { storeId, resource: def.name, kind: 'create', object: def.toJson(row) });
      await then?.(tx, row);
      return row;
    });
  }

  update(
    def: ResourceDef,
    storeId: number,
    id: number,
    body: Record<string, unknown>,
    then?: WriteStep<ResourceRow>,
    condition?: WriteCondition,
  ): Promise<ResourceRow> {
    const values = def.updateValues(body, this.clock());
    return this.storage.transaction(async (tx) => {
      if (!(await tx.resources.exists(def.name, storeId, id))) throw new NotFoundError(`No ${def.singular} with id ${id}`);
      await this.checkReferences(tx, def, storeId, values, id);
      const row = await emailTakenOnDuplicate(tx.resources.update(def.name, storeId, id, values, guardOf(condition)));
      if (!row) return refuse(tx, def, storeId, id, condition);
      await this.outbox.record(tx, { storeId, resource: def.name, kind: 'update', object: def.toJson(row) });
      await then?.(tx, row);
      return row;
    });
  }

  async delete(def: ResourceDef, storeId: number, id: number, then?: WriteStep<void>, condition?: WriteCondition): Promise<void> {
    await this.storage.transaction(async (tx) => {
      const row = await tx.resources.delete(def.name, storeId, id, guardOf(condition));
      if (!row) return refuse(tx, def, storeId, id, condition);
      await this.outbox.record(tx, { storeId, resource: def.name, kind: 'delete', object: def.toJson(row) });
      await then?.(tx, undefined);
    });
  }

  /**
   * Checks that need the database: a customer email is unique in its store; an order's customer
   * exists there. The email check answers the common case; a concurrent write with the same email
   * that it cannot see yet is refused by the database (emailTakenOnDuplicate).
   */
  private async checkReferences(
    tx: Repositories,
    def: ResourceDef,
    storeId: number,
    values: Record<string, unknown>,
    selfId: number | undefined,
  ): Promise<void> {
    if (
      def.name === 'customers' &&
      typeof values.email === 'string' &&
      (await tx.resources.customerEmailTaken(storeId, values.email, selfId))
    ) {
      throw new ValidationFailedError({ email: ['has already been taken'] });
    }
    if (
      def.name === 'orders' &&
      typeof values.customer_id === 'number' &&
      !(await tx.resources.exists('customers', storeId, values.customer_id))
    ) {
      throw new ValidationFailedError({ customer_id: ['does not exist in this store'] });
    }
  }
}

function guardOf(condition: WriteCondition | undefined): WriteGuard | undefined {
  if (condition === undefined) return undefined;
  return { versions: acceptedVersions(condition), inventoryQuantity: condition.expectedInventory };
}

/**
 * Why a guarded write changed no row, read after it in the same transaction: the record is gone
 * (404), its version is not one the If-Match named (412), or its inventory quantity is not the
 * expected one (409 naming it). If-Match is judged first, as preconditions come before the request.
 */
async function refuse(
  tx: Repositories,
  def: ResourceDef,
  storeId: number,
  id: number,
  condition: WriteCondition | undefined,
): Promise<never> {
  const row = await tx.resources.get(def.name, storeId, id);
  if (!row) throw new NotFoundError(`No ${def.singular} with id ${id}`);
  if (!satisfies(condition?.ifMatch, Number(row.version)))
    throw new PreconditionFailedError(`The ${def.singular} changed since the ETag in If-Match was read; nothing was changed`);
  const expected = condition?.expectedInventory;
  if (expected !== undefined && Number(row.inventory_quantity) !== expected)
    throw new InventoryQuantityMismatchError(Number(row.inventory_quantity));
  // The conditions hold again by now: another write changed the record and changed it back.
  throw new ConflictError(`The ${def.singular} changed while this request ran; nothing was changed; send it again`);
}

/**
 * A customer's email is the one unique key of a store resource besides its id, so a duplicate the
 * database refused is the same answer the check before the write gives.
 */
async function emailTakenOnDuplicate<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (err instanceof DuplicateRecordError && err.record === 'customers')
      throw new ValidationFailedError({ email: ['has already been taken'] });
    throw err;
  }
}

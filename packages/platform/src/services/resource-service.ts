// Store resources: get, create, update, delete inside transactions. Every change goes through
// `ChangeRecorder` in the same transaction, so the webhook outbox can never disagree with the data.
import type { Kysely, Transaction } from 'kysely';
import type { ResourceDef } from '../http/admin-api/resources.ts';
import { NotFoundError, ValidationFailedError } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';
import type { Clock } from './clock.ts';

export type ChangeKind = 'create' | 'update' | 'delete';

/** Called inside the change's transaction (the webhooks outbox implements it). */
export interface ChangeRecorder {
  record(trx: Transaction<Database>, change: { storeId: number; resource: ResourceDef; kind: ChangeKind; object: Record<string, unknown> }): Promise<void>;
  /** Called after the change's transaction committed (wakes this process's webhook worker). */
  afterCommit?(): void;
}

export const noChangeRecorder: ChangeRecorder = { record: async () => {} };

export class ResourceService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    public recorder: ChangeRecorder = noChangeRecorder,
  ) {}

  private get k(): Kysely<any> {
    return this.db.kysely as Kysely<any>;
  }

  async get(def: ResourceDef, storeId: number, id: number): Promise<any> {
    const row = await this.k.selectFrom(def.table).selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError(`No ${def.singular} with id ${id}`);
    return row;
  }

  async create(def: ResourceDef, storeId: number, body: Record<string, unknown>): Promise<any> {
    const values = { ...def.createValues(body, this.clock()), store_id: storeId };
    const created = await this.db.durableTransaction(async (trx) => {
      await this.checkReferences(trx as unknown as Kysely<any>, def, storeId, values, undefined);
      const row = await (trx as unknown as Kysely<any>).insertInto(def.table).values(values).returningAll().executeTakeFirstOrThrow();
      await this.recorder.record(trx, { storeId, resource: def, kind: 'create', object: def.toJson(row) });
      return row;
    });
    this.recorder.afterCommit?.();
    return created;
  }

  async update(def: ResourceDef, storeId: number, id: number, body: Record<string, unknown>): Promise<any> {
    const values = def.updateValues(body, this.clock());
    const updated = await this.db.durableTransaction(async (trx) => {
      const t = trx as unknown as Kysely<any>;
      const existing = await t.selectFrom(def.table).select('id').where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst();
      if (!existing) throw new NotFoundError(`No ${def.singular} with id ${id}`);
      await this.checkReferences(t, def, storeId, values, id);
      const row = await t.updateTable(def.table).set(values).where('store_id', '=', storeId).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
      await this.recorder.record(trx, { storeId, resource: def, kind: 'update', object: def.toJson(row) });
      return row;
    });
    this.recorder.afterCommit?.();
    return updated;
  }

  async delete(def: ResourceDef, storeId: number, id: number): Promise<void> {
    await this.db.durableTransaction(async (trx) => {
      const t = trx as unknown as Kysely<any>;
      const row = await t.deleteFrom(def.table).where('store_id', '=', storeId).where('id', '=', id).returningAll().executeTakeFirst();
      if (!row) throw new NotFoundError(`No ${def.singular} with id ${id}`);
      await this.recorder.record(trx, { storeId, resource: def, kind: 'delete', object: def.toJson(row) });
    });
    this.recorder.afterCommit?.();
  }

  /** Checks that need the database: a customer email is unique in its store; an order's customer exists there. */
  private async checkReferences(t: Kysely<any>, def: ResourceDef, storeId: number, values: Record<string, unknown>, selfId: number | undefined): Promise<void> {
    if (def.table === 'customers' && values.email !== undefined) {
      let q = t.selectFrom('customers').select('id').where('store_id', '=', storeId).where('email', '=', values.email);
      if (selfId !== undefined) q = q.where('id', '!=', selfId);
      if (await q.executeTakeFirst()) throw new ValidationFailedError({ email: ['has already been taken'] });
    }
    if (def.table === 'orders' && values.customer_id !== undefined && values.customer_id !== null) {
      const found = await t.selectFrom('customers').select('id').where('store_id', '=', storeId).where('id', '=', values.customer_id as number).executeTakeFirst();
      if (!found) throw new ValidationFailedError({ customer_id: ['does not exist in this store'] });
    }
  }
}

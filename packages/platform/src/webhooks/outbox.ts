// The transactional outbox (PRODUCT.md §7): every change that emits an event writes the event and
// one delivery per matching active subscription inside the change's own transaction. A rollback
// takes them with it; a commit makes them durable before anyone is told.
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Topic } from '../http/admin-api/webhooks.route.ts';
import type { Clock } from '../services/clock.ts';
import type { ChangeKind, ChangeRecorder } from '../services/resource-service.ts';
import type { ResourceDef } from '../http/admin-api/resources.ts';
import type { Db } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';

type Trx = Transaction<Database> | Kysely<Database>;

// Workers of this process that want to hear about commits, per database handle: a commit wakes
// them at once instead of at their next poll (other processes find the rows by polling).
const listeners = new WeakMap<Db, Set<() => void>>();

export function onOutboxCommit(db: Db, fn: () => void): () => void {
  let set = listeners.get(db);
  if (!set) listeners.set(db, (set = new Set()));
  set.add(fn);
  return () => set.delete(fn);
}

export function notifyOutboxCommit(db: Db): void {
  const set = listeners.get(db);
  if (set) for (const fn of set) fn();
}

/** The topic a change emits, or none (orders are never deleted; customers/delete is not a topic). */
export function topicFor(resource: ResourceDef['name'], kind: ChangeKind): Topic | undefined {
  switch (`${resource}/${kind}`) {
    case 'products/create':
      return 'products/create';
    case 'products/update':
      return 'products/update';
    case 'products/delete':
      return 'products/delete';
    case 'orders/create':
      return 'orders/create';
    case 'orders/update':
      return 'orders/updated';
    case 'customers/create':
      return 'customers/create';
    case 'customers/update':
      return 'customers/update';
    default:
      return undefined;
  }
}

export function newWebhookId(): string {
  return `wh_${randomBytes(16).toString('base64url')}`;
}

function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

export class WebhookOutbox implements ChangeRecorder {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async record(trx: Transaction<Database>, change: { storeId: number; resource: ResourceDef; kind: ChangeKind; object: Record<string, unknown> }): Promise<void> {
    const topic = topicFor(change.resource.name, change.kind);
    if (topic) await this.enqueue(trx, { storeId: change.storeId, topic, payload: change.object });
  }

  afterCommit(): void {
    notifyOutboxCommit(this.db);
  }

  /**
   * Writes the event and its deliveries for every active subscription to `topic` in the store
   * whose owner may still receive it: an installed app, a private app that is not revoked.
   * `uninstalledAppId`: the `app/uninstalled` event, sent to that app although it is no longer
   * installed. Returns the number of deliveries written.
   */
  async enqueue(trx: Trx, input: { storeId: number; topic: Topic; payload: Record<string, unknown>; uninstalledAppId?: number }): Promise<number> {
    let q = trx
      .selectFrom('webhook_subscriptions as s')
      .leftJoin('installations as i', (j) => j.onRef('i.store_id', '=', 's.store_id').onRef('i.app_id', '=', 's.app_id'))
      .leftJoin('private_apps as p', 'p.id', 's.private_app_id')
      .select(['s.id', 's.app_id', 's.private_app_id'])
      .where('s.store_id', '=', input.storeId)
      .where('s.topic', '=', input.topic)
      .where('s.disabled_at', 'is', null);
    if (input.uninstalledAppId !== undefined) q = q.where('s.app_id', '=', input.uninstalledAppId);
    else {
      q = q
        .where((eb) => eb.or([eb('s.app_id', 'is', null), eb.and([eb('i.id', 'is not', null), eb('i.uninstalled_at', 'is', null)])]))
        .where((eb) => eb.or([eb('s.private_app_id', 'is', null), eb.and([eb('p.id', 'is not', null), eb('p.revoked_at', 'is', null)])]));
    }
    const subs = await q.orderBy('s.id').execute();
    if (subs.length === 0) return 0;
    const now = this.clock();
    const eventId = newEventId();
    await trx.insertInto('webhook_events').values({ id: eventId, store_id: input.storeId, topic: input.topic, payload: JSON.stringify(input.payload), created_at: now }).execute();
    await trx
      .insertInto('webhook_deliveries')
      .values(
        subs.map((s) => ({
          webhook_id: newWebhookId(),
          event_id: eventId,
          subscription_id: s.id,
          store_id: input.storeId,
          app_id: s.app_id,
          private_app_id: s.private_app_id,
          topic: input.topic,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          claimed_by: null,
          claimed_until: null,
          last_status: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    return subs.length;
  }
}

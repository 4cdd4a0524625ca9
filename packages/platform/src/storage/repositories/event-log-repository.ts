// The events list: one owner's deliveries in a store with the body they carry, read through the
// partial indexes (store_id, app_id | private_app_id, created_at, id, topic) in that order, so a
// page anywhere in the window costs one range scan on either database.
import type { EventLogQuery, EventLogRepository, EventLogRow } from '../ports.ts';
import type { Executor } from './executor.ts';

export class SqlEventLogRepository implements EventLogRepository {
  constructor(private readonly x: Executor) {}

  page(q: EventLogQuery): Promise<EventLogRow[]> {
    if (q.topics.length === 0 || q.limit < 1) return Promise.resolve([]);
    let query = this.x.k
      .selectFrom('webhook_deliveries as d')
      // An event is pruned only once no delivery refers to it, so the inner join loses nothing.
      .innerJoin('webhook_events as e', (j) => j.onRef('e.store_id', '=', 'd.store_id').onRef('e.id', '=', 'd.event_id'))
      .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
      .select(['d.id', 'd.webhook_id', 'd.event_id', 'd.topic', 'd.status', 'd.attempts', 'd.created_at', 'e.payload', 's.api_version'])
      .where('d.store_id', '=', q.storeId);
    // The equality on the owner's column implies it is not null, which lets both databases use the
    // partial index of that kind of owner.
    query = 'appId' in q.owner ? query.where('d.app_id', '=', q.owner.appId) : query.where('d.private_app_id', '=', q.owner.privateAppId);
    query = query.where('d.created_at', '>=', q.since).where('d.topic', 'in', [...q.topics]);
    if (q.after) {
      const { createdAt, id } = q.after;
      query = query.where((eb) => eb(eb.refTuple('d.created_at', 'd.id'), '>', eb.tuple(createdAt, id)));
    }
    return query.orderBy('d.created_at', 'asc').orderBy('d.id', 'asc').limit(q.limit).execute();
  }
}

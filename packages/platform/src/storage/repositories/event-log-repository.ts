// The events list: one owner's deliveries in a store with the body they carry, read through the
// partial indexes (store_id, app_id | private_app_id, created_at, id, topic) in that order, so a
// page anywhere in the window costs one range scan on either database.
//
// The topics are checked on the index entries, not sought: a page of a topic that is rare among
// the owner's deliveries would otherwise read every delivery of the window (a month of a busy
// app's product updates) to find a few orders. So a page reads at most EVENT_SCAN deliveries:
// the first statement finds where that stretch ends (by the index alone), the second reads the
// page within it. A page that finds fewer than it was asked for there stops at the stretch's end,
// and the next page continues from it. An index led by the topic would seek each topic instead,
// at the price of one more index entry for every delivery queued, which the outbox pays on every
// change; the events list is a recovery tool and does not justify it.
import { sql } from 'kysely';
import type { EventLogPage, EventLogQuery, EventLogRepository, EventLogRow } from '../ports/event-log.ts';
import type { Executor } from './executor.ts';

/** The most deliveries one page of the events list reads. */
export const EVENT_SCAN = 2000;

export class SqlEventLogRepository implements EventLogRepository {
  constructor(
    private readonly x: Pick<Executor, 'k'>,
    private readonly scan = EVENT_SCAN,
  ) {}

  /** The owner's deliveries in the store from the query's position on, as the index orders them. */
  private deliveries(q: EventLogQuery) {
    let query = this.x.k.selectFrom('webhook_deliveries as d').where('d.store_id', '=', q.storeId);
    // The equality on the owner's column implies it is not null, which lets both databases use the
    // partial index of that kind of owner.
    query = 'appId' in q.owner ? query.where('d.app_id', '=', q.owner.appId) : query.where('d.private_app_id', '=', q.owner.privateAppId);
    query = query.where('d.created_at', '>=', q.since);
    if (q.after) {
      const { createdAt, id } = q.after;
      query = query.where((eb) => eb(eb.refTuple('d.created_at', 'd.id'), '>', eb.tuple(createdAt, id)));
    }
    return query;
  }

  async page(q: EventLogQuery): Promise<EventLogPage> {
    if (q.topics.length === 0 || q.limit < 1) return { rows: [] };
    // Where the stretch this page may read ends: the last of its first EVENT_SCAN deliveries.
    const stretch = this.deliveries(q)
      .select(['d.created_at', 'd.id'])
      .orderBy('d.created_at', 'asc')
      .orderBy('d.id', 'asc')
      .limit(this.scan)
      .as('w');
    const end = await this.x.k
      .selectFrom(stretch)
      .select(['w.created_at', 'w.id', sql<number>`count(*) over ()`.as('n')])
      .orderBy('w.created_at', 'desc')
      .orderBy('w.id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!end) return { rows: [] };
    const last = { createdAt: Number(end.created_at), id: Number(end.id) };
    const rows = (await this.deliveries(q)
      .where((eb) => eb(eb.refTuple('d.created_at', 'd.id'), '<=', eb.tuple(last.createdAt, last.id)))
      .where('d.topic', 'in', [...q.topics])
      // An event is pruned only once no delivery refers to it, so the inner join loses nothing.
      .innerJoin('webhook_events as e', (j) => j.onRef('e.store_id', '=', 'd.store_id').onRef('e.id', '=', 'd.event_id'))
      .leftJoin('webhook_subscriptions as s', (j) => j.onRef('s.store_id', '=', 'd.store_id').onRef('s.id', '=', 'd.subscription_id'))
      .select(['d.id', 'd.webhook_id', 'd.event_id', 'd.topic', 'd.status', 'd.attempts', 'd.created_at', 'e.payload'])
      .select(['d.include_fields', 's.api_version'])
      .orderBy('d.created_at', 'asc')
      .orderBy('d.id', 'asc')
      .limit(q.limit)
      .execute()) as EventLogRow[];
    const full = Number(end.n) >= this.scan;
    return rows.length < q.limit && full ? { rows, stoppedAt: last } : { rows };
  }
}

// The stored webhook bodies that name one customer, found and rewritten when the customer is
// redacted. A body lives once, on its event; every delivery of the event (sent, queued or retrying)
// and the events list read it from there, so rewriting the event rewrites all of them.
//
// The events table has no column saying which customer an event is about, and adding an index
// for it would cost every change that emits an event one more index entry, to serve a rare
// request. So the search is bounded by what is indexed already: the store's deliveries of the
// topics that can name a customer, read from the two events-list indexes (led by store_id, topic
// inside them), and their events by key; only those bodies are parsed, to compare the customer id
// each carries. Deliveries and their events are pruned after the log's retention, so this is at
// most the store's customer and order events of that window, whatever other stores hold.
import { type RawBuilder, sql } from 'kysely';
import { CUSTOMER_ID_PATHS, CUSTOMER_TOPICS, type CustomerTopic } from '../../domain/customer-redaction.ts';
import type { EventPayloadRepository, StoredEventPayload } from '../ports/event-payloads.ts';
import type { Executor } from './executor.ts';

/** Rows per rewriting statement: one round trip for many events, parameters of a bounded size. */
const REPLACE_CHUNK = 200;

export class SqlEventPayloadRepository implements EventPayloadRepository {
  constructor(private readonly x: Executor) {}

  /** The text at `path` of the event's body, spelled for this database. */
  private field(path: readonly string[]): RawBuilder<string | null> {
    if (this.x.dialect === 'sqlite') return sql<string | null>`e.payload ->> ${sql.lit(`$.${path.join('.')}`)}`;
    return sql<string | null>`cast(e.payload as json) #>> ${sql.lit(`{${path.join(',')}}`)}`;
  }

  async namingCustomer(storeId: number, customerId: number): Promise<StoredEventPayload[]> {
    const topics = sql.join(CUSTOMER_TOPICS.map((t) => sql.lit(t)));
    // One path per topic: the CASE reads each body once.
    const customerOf = sql.join(
      CUSTOMER_TOPICS.map((t) => sql`when ${sql.lit(t)} then ${this.field(CUSTOMER_ID_PATHS[t])}`),
      sql` `,
    );
    // Each branch names its kind of owner, so each can use that owner's partial index.
    const rows = await sql<{ id: string; topic: CustomerTopic; payload: string }>`
      select e.id, e.topic, e.payload from webhook_events e
      where e.store_id = ${storeId}
        and e.id in (
          select d.event_id from webhook_deliveries d
          where d.store_id = ${storeId} and d.app_id is not null and d.topic in (${topics})
          union all
          select d.event_id from webhook_deliveries d
          where d.store_id = ${storeId} and d.private_app_id is not null and d.topic in (${topics})
        )
        and e.topic in (${topics})
        and (case e.topic ${customerOf} end) = ${String(customerId)}
      order by e.created_at, e.id`.execute(this.x.k);
    return rows.rows;
  }

  async replace(storeId: number, events: readonly { id: string; payload: string }[]): Promise<number> {
    let changed = 0;
    for (let i = 0; i < events.length; i += REPLACE_CHUNK) {
      const chunk = events.slice(i, i + REPLACE_CHUNK);
      const res =
        this.x.dialect === 'sqlite'
          ? await sql`update webhook_events as e set payload = v.value ->> 1
              from json_each(${JSON.stringify(chunk.map((c) => [c.id, c.payload]))}) as v
              where e.store_id = ${storeId} and e.id = v.value ->> 0`.execute(this.x.k)
          : await sql`update webhook_events as e set payload = v.payload
              from unnest(cast(${chunk.map((c) => c.id)} as text[]), cast(${chunk.map((c) => c.payload)} as text[])) as v (id, payload)
              where e.store_id = ${storeId} and e.id = v.id`.execute(this.x.k);
      changed += Number(res.numAffectedRows ?? 0);
    }
    return changed;
  }
}

// The outbox's statements, written by every change that emits an event (a product created, an
// order updated…), compiled once per database: building and compiling them with Kysely on every
// change cost more than running them. The deliveries of an event go in as one statement with one
// SQL text whatever their number (a JSON array on SQLite, arrays on PostgreSQL), so it is prepared
// once as well.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { defineQuery } from '../prepared-query.ts';
import type { Recipient } from '../ports/rows.ts';
import type { Database } from '../schema.ts';

const compilable = <R>(k: Kysely<Database>, raw: RawBuilder<R>) => ({ compile: () => raw.compile(k) });

const DELIVERY_COLUMNS = sql.raw(
  `webhook_id, event_id, subscription_id, store_id, app_id, private_app_id, include_fields, topic, status, attempts,
  next_attempt_at, last_status, last_error, created_at, updated_at`,
);

/** The part of a delivery row every delivery of one event shares, after its own five columns. */
const shared = (cast: (name: string, type: 'text' | 'bigint') => RawBuilder<unknown>) =>
  sql`${cast('topic', 'text')}, 'pending', 0, ${cast('due', 'bigint')}, null, null, ${cast('now', 'bigint')}, ${cast('now', 'bigint')}`;

function insertDeliveries(k: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  return defineQuery((p) => {
    if (dialect === 'sqlite') {
      // Each element of `rows` is [webhook_id, subscription_id, app_id, private_app_id, include_fields].
      const plain = (name: string) => sql`${p(name)}`;
      return compilable(
        k,
        sql`insert into webhook_deliveries (${DELIVERY_COLUMNS})
          select value ->> 0, ${p('event')}, value ->> 1, ${p<number>('store')}, value ->> 2, value ->> 3, value ->> 4,
            ${shared(plain)}
          from json_each(${p('rows')})`,
      );
    }
    // Parameters in a SELECT list have no type PostgreSQL could infer: each is cast to its column's.
    const cast = (name: string, type: 'text' | 'bigint') => sql`cast(${p(name)} as ${sql.raw(type)})`;
    return compilable(
      k,
      sql`insert into webhook_deliveries (${DELIVERY_COLUMNS})
        select v.webhook_id, ${cast('event', 'text')}, v.subscription_id, ${cast('store', 'bigint')}, v.app_id, v.private_app_id,
          v.include_fields, ${shared(cast)}
        from unnest(cast(${p('webhookIds')} as text[]), cast(${p('subscriptionIds')} as bigint[]), cast(${p('appIds')} as bigint[]),
          cast(${p('privateAppIds')} as bigint[]), cast(${p('includeFields')} as text[]))
          as v (webhook_id, subscription_id, app_id, private_app_id, include_fields)`,
    );
  });
}

export type OutboxStatements = ReturnType<typeof outboxStatements>;

export function outboxStatements(k: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  const subscriptions = () =>
    k
      .selectFrom('webhook_subscriptions as s')
      .leftJoin('installations as i', (j) => j.onRef('i.store_id', '=', 's.store_id').onRef('i.app_id', '=', 's.app_id'))
      .leftJoin('private_apps as p', (j) => j.onRef('p.store_id', '=', 's.store_id').onRef('p.id', '=', 's.private_app_id'))
      .select(['s.id', 's.app_id', 's.private_app_id', 's.filter', 's.include_fields'])
      .select((eb) => eb.fn.coalesce('i.scopes', 'p.scopes').as('scopes'))
      .where('s.disabled_at', 'is', null)
      .orderBy('s.id');
  return {
    /** Active subscriptions to a topic whose owner is installed (an app) or not revoked (a private app). */
    recipients: defineQuery<Recipient>((p) =>
      subscriptions()
        .where('s.store_id', '=', p<number>('store'))
        .where('s.topic', '=', p('topic'))
        .where((eb) => eb.or([eb('s.app_id', 'is', null), eb.and([eb('i.id', 'is not', null), eb('i.uninstalled_at', 'is', null)])]))
        .where((eb) => eb.or([eb('s.private_app_id', 'is', null), eb.and([eb('p.id', 'is not', null), eb('p.revoked_at', 'is', null)])])),
    ),
    /** One app's subscriptions to a topic, whatever its installation says (`app/uninstalled`, `app/scopes_update`). */
    appRecipients: defineQuery<Recipient>((p) =>
      subscriptions()
        .where('s.store_id', '=', p<number>('store'))
        .where('s.topic', '=', p('topic'))
        .where('s.app_id', '=', p<number>('app')),
    ),
    insertEvent: defineQuery((p) =>
      k.insertInto('webhook_events').values({
        id: p('id'),
        store_id: p<number>('store'),
        topic: p('topic'),
        payload: p('payload'),
        created_at: p<number>('now'),
      }),
    ),
    insertDeliveries: insertDeliveries(k, dialect),
  };
}

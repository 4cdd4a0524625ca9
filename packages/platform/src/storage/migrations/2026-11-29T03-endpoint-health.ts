// Endpoint health: an hourly rollup of webhook attempts per owner (an app or a private app) and
// endpoint (an origin), with counts by outcome and a latency histogram of fixed buckets, added to by
// every worker as it records outcomes and pruned after 8 days; and each owner's circuit breaker at
// an endpoint in one store, written by whichever worker changes its state. Neither is a store
// table: the rollup sums an app over every store it is installed in, and the breakers are read per
// app too; both stay small (a row per owner, endpoint and hour; a row per breaker that changed).
// Indexes by app on subscriptions and installations serve the next attempt per endpoint. Frozen
// once landed.
import { type Kysely, sql } from 'kysely';

/** The latency buckets' upper bounds in ms, as column names (`ms_25` … `ms_60000`). */
const BUCKET_COLUMNS = [25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 60000].map((ms) => `ms_${ms}`);

export async function up(db: Kysely<unknown>): Promise<void> {
  let hours = db.schema
    .createTable('webhook_endpoint_hours')
    .addColumn('owner_kind', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'bigint', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('delivered', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('no_answer', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('not_sent', 'bigint', (c) => c.notNull().defaultTo(0));
  for (const column of BUCKET_COLUMNS) hours = hours.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
  await hours.addPrimaryKeyConstraint('webhook_endpoint_hours_pk', ['owner_kind', 'owner_id', 'origin', 'hour']).execute();
  // The maintenance round deletes hours past the window, whoever they belong to.
  await db.schema.createIndex('webhook_endpoint_hours_hour').on('webhook_endpoint_hours').column('hour').execute();

  await db.schema
    .createTable('webhook_endpoint_breakers')
    .addColumn('owner_kind', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'bigint', (c) => c.notNull())
    .addColumn('store_id', 'bigint', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('reopen_at', 'bigint')
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_endpoint_breakers_pk', ['owner_kind', 'owner_id', 'store_id', 'origin'])
    .execute();

  // The next attempt per endpoint starts from an app's subscriptions and installations in every
  // store: found through these rather than by reading every store's subscriptions. Subscriptions
  // and installations are written rarely, so the indexes cost little.
  await sql`create index if not exists webhook_subscriptions_app on webhook_subscriptions (app_id) where app_id is not null`.execute(db);
  await sql`create index if not exists installations_app on installations (app_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('installations_app').ifExists().execute();
  await db.schema.dropIndex('webhook_subscriptions_app').ifExists().execute();
  await db.schema.dropTable('webhook_endpoint_breakers').ifExists().execute();
  await db.schema.dropTable('webhook_endpoint_hours').ifExists().execute();
}

// The hourly pruning of the webhook log: attempts, finished deliveries and their events past the
// retention, by age, whichever store they belong to (so each statement is marked fleet-wide); and
// the leases nobody will end: those of deliveries gone, and those lapsed before the cutoff (a
// lapsed lease holds nothing, and its worker stopped long ago).
import type { Kysely } from 'kysely';
import { fleetWide } from '../fleet-wide.ts';
import type { Database } from '../schema.ts';

export async function pruneWebhookLog(
  k: Kysely<Database>,
  cutoff: number,
): Promise<{ attempts: number; deliveries: number; events: number }> {
  const prune = fleetWide('webhook-prune');
  const old = k.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'pending').where('updated_at', '<', cutoff);
  const a1 = await k.deleteFrom('webhook_attempts').where('attempted_at', '<', cutoff).modifyEnd(prune).executeTakeFirst();
  const a2 = await k.deleteFrom('webhook_attempts').where('delivery_id', 'in', old).modifyEnd(prune).executeTakeFirst();
  const d = await k
    .deleteFrom('webhook_deliveries')
    .where('status', '!=', 'pending')
    .where('updated_at', '<', cutoff)
    .modifyEnd(prune)
    .executeTakeFirst();
  await k
    .deleteFrom('webhook_delivery_leases as l')
    .where((eb) =>
      eb.or([
        eb('l.leased_until', '<', cutoff),
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as d')
              .select('d.id')
              .whereRef('d.store_id', '=', 'l.store_id')
              .whereRef('d.id', '=', 'l.delivery_id'),
          ),
        ),
      ]),
    )
    .modifyEnd(prune)
    .execute();
  const e = await k
    .deleteFrom('webhook_events')
    .where('created_at', '<', cutoff)
    // NOT IN over one subquery (built once), not a correlated NOT EXISTS per event.
    .where('id', 'not in', k.selectFrom('webhook_deliveries').select('event_id'))
    .modifyEnd(prune)
    .executeTakeFirst();
  return {
    attempts: Number(a1.numDeletedRows) + Number(a2.numDeletedRows),
    deliveries: Number(d.numDeletedRows),
    events: Number(e.numDeletedRows),
  };
}

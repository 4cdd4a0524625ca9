// Which owner and endpoint an attempt of a job counts for in the endpoint health figures: the
// owner parsed back from the job's owner key (`ownerOf`), the endpoint being the job's origin.
import type { BreakerChangeRecord, EndpointKey } from '../storage/ports/endpoint-health.ts';
import type { BreakerChange } from './circuit-breaker.ts';
import type { Endpoint } from './origin-dispatcher.ts';

/** The owner key's parts: `<store id>/app/<id>` or `<store id>/private/<id>`; undefined for anything else. */
function ownerParts(owner: string): { storeId: number; key: Omit<EndpointKey, 'origin'> } | undefined {
  const m = /^(\d+)\/(app|private)\/(\d+)$/.exec(owner);
  if (!m) return undefined;
  return { storeId: Number(m[1]), key: { ownerKind: m[2] === 'app' ? 'app' : 'private', ownerId: Number(m[3]) } };
}

export function endpointKeyOf(job: { owner: string; origin: string }): EndpointKey | undefined {
  const parts = ownerParts(job.owner);
  return parts ? { ...parts.key, origin: job.origin } : undefined;
}

/** A breaker's change of state as the database keeps it; undefined for an owner it does not track. */
export function breakerRecord(endpoint: Endpoint, change: BreakerChange, now: number): BreakerChangeRecord | undefined {
  const parts = ownerParts(endpoint.owner);
  if (!parts) return undefined;
  return {
    ...parts.key,
    origin: endpoint.origin,
    storeId: parts.storeId,
    state: change.to,
    failures: change.to === 'closed' ? 0 : change.failures,
    reopenAt: change.to === 'open' ? (change.reopenAt ?? null) : null,
    changedAt: now,
  };
}

// Recovering a webhook subscription (API version 2026-01 and later): enable one the platform
// disabled (its endpoint answered 410, or its deliveries died one after another) and replay its
// deliveries since a time. A replayed delivery carries its original webhook id, so a handler that
// de-duplicates by it skips what it already processed. `client.webhooks.enable` and `.replay`.
import { ParameterError } from '../errors.ts';

export interface ReplayInput {
  /** Deliveries created at or after this time (within the 30 days the platform keeps them). */
  since: Date | string;
  /** `failed` (default): never delivered (dead or cancelled); `all`: delivered ones too. */
  status?: 'failed' | 'all';
}

/** What a replay queued. */
export interface ReplayResult {
  subscription_id: string;
  since: string;
  status: 'failed' | 'all';
  /** Deliveries queued again by this call. */
  queued: number;
  /** Deliveries of the window still queued from before (not queued twice). */
  already_queued: number;
  /** More matched than one replay takes (1,000): call again with `since: next_since`. */
  capped: boolean;
  next_since: string | null;
}

/** The part of the Admin API client these calls need. */
export interface RecoveryClient {
  post<T>(resource: string, body?: unknown, options?: { idempotencyKey?: string | false; signal?: AbortSignal }): Promise<T>;
}

function subscriptionPath(id: string | number, action: 'enable' | 'replay'): string {
  const text = String(id);
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new ParameterError('PARAMETER_INVALID', 'id', 'id must be a webhook subscription id');
  return `webhooks/${text}/${action}`;
}

/**
 * Makes a disabled subscription active again in place (same id, history and deliveries); an active
 * one is answered as it is. `S`: the subscription as the caller types it.
 */
export async function enableSubscription<S>(
  client: RecoveryClient,
  id: string | number,
  options: { signal?: AbortSignal } = {},
): Promise<S> {
  const path = subscriptionPath(id, 'enable');
  return (await client.post<{ data: S }>(path, {}, { idempotencyKey: false, ...options })).data;
}

/** Queues the subscription's deliveries since a time again, each with its original webhook id. */
export async function replaySubscription(
  client: RecoveryClient,
  id: string | number,
  input: ReplayInput,
  options: { signal?: AbortSignal } = {},
): Promise<ReplayResult> {
  const path = subscriptionPath(id, 'replay');
  const raw = input?.since;
  if (raw instanceof Date && Number.isNaN(raw.getTime()))
    throw new ParameterError('PARAMETER_INVALID', 'since', 'since is an invalid Date');
  const since = raw instanceof Date ? raw.toISOString() : raw;
  if (typeof since !== 'string' || since === '') throw new ParameterError('PARAMETER_MISSING', 'since');
  const body = { since, ...(input.status ? { status: input.status } : {}) };
  // Replaying twice queues nothing twice, so a retry needs no Idempotency-Key.
  return (await client.post<{ data: ReplayResult }>(path, body, { idempotencyKey: false, ...options })).data;
}

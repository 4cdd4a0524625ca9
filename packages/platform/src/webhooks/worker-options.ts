// What the composition root hands the delivery worker; each optional setting says its default.
import type { DatabaseOutage } from './database-outage.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { CredentialPruneCounts } from '../domain/credential-retention.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { SigningKey } from '../domain/webhook-signing-keys.ts';
import type { DeliveryMetrics } from '../services/metrics.ts';
import type { DeliveryQueue } from '../storage/ports/delivery-queue.ts';
import type { Resolver } from './address-guard.ts';
import type { BreakerLog } from './breaker-ledger.ts';
import type { BreakerSettings } from './circuit-breaker.ts';
import type { WorkerLogger } from './worker-logger.ts';

export interface PruneResult {
  attempts: number;
  deliveries: number;
  events: number;
  /** Idempotency keys past their window, when the round prunes those too. */
  idempotencyKeys?: number;
  /** Codes, tokens, token families, sessions and reveals past their last use, when the round prunes those too. */
  credentials?: CredentialPruneCounts;
  /** Notices sent before a deprecated API version's sunset, when the round sends those too. */
  apiVersionNotices?: number;
  /** Bulk operations (and their files) past their retention, when the round prunes those too. */
  bulkOperations?: number;
  /** Hours of endpoint health figures and breaker states past their window, when the round prunes those too. */
  endpointHealth?: number;
  /** Webhook signing keys whose overlap had ended, when the round deletes those too. */
  signingKeys?: number;
}

export interface WebhookWorkerOptions {
  /** The delivery table: claims under a lease and batched outcome writes. */
  queue: DeliveryQueue;
  /** Subscribes to "deliveries were queued in this process" (wakes the loop); returns the unsubscribe. */
  onDeliveriesQueued: (listener: () => void) => () => void;
  box: SecretBox;
  config: Pick<Config, 'mode' | 'storeDomain' | 'webhooks' | 'webhookClaimLeaseMs'> & Partial<Pick<Config, 'webhookEndpointConcurrency'>>;
  /** Deletes old rows of the delivery log (and expired idempotency keys and credentials); without it the worker prunes nothing. */
  prune?: () => Promise<PruneResult>;
  clock?: Clock;
  /** [0, 1); jitter of the retry waits. */
  random?: () => number;
  /** Rows claimed per query at most (default 250; never more than the dispatcher has room for). */
  batchSize?: number;
  /** Requests in flight over all receivers (default 64). */
  maxInFlight?: number;
  /**
   * Requests in flight per endpoint, an origin (scheme, host, port): a slow or hanging receiver
   * holds at most this many of the `maxInFlight` (default `config.webhookEndpointConcurrency`, else 8).
   */
  perOrigin?: number;
  /**
   * Requests in flight per owner (an app or private app in one store) within one endpoint, from 1
   * to `perOrigin` (default half of `perOrigin`, at least 1): what one owner's hanging paths can
   * hold of an endpoint shared with other owners.
   */
  perOwner?: number;
  /** Where each change of a breaker's state is written for every node to see (default: nowhere). */
  breakerLog?: BreakerLog;
  /** When an owner's circuit breaker at an endpoint opens and for how long (default `DEFAULT_BREAKER`). */
  breaker?: Partial<BreakerSettings>;
  /** How often to look for due rows when nothing woke the worker (default 500 ms). */
  pollMs?: number;
  /**
   * How long a claim lasts unless renewed; a heartbeat renews it every third of this while the
   * worker still holds the row (default `config.webhookClaimLeaseMs`).
   */
  leaseMs?: number;
  /** Name resolution for the production address check and the connections that follow it (default: the system resolver). */
  resolve?: Resolver;
  /** How often old log rows are pruned (default hourly; 0 = never). */
  pruneEveryMs?: number;
  logger?: WorkerLogger;
  /** Counts attempts by outcome and those in flight (default: counted nowhere). */
  metrics?: DeliveryMetrics;
  /**
   * Runs bulk exports beside the deliveries, started and stopped with the worker (default: none);
   * given the worker's outage tracker, so a database outage is one warning for the whole worker.
   */
  bulkExports?: { start(outage?: DatabaseOutage): void; stop(): Promise<void> };
  /** The platform keys that add `v1a` signatures for the apps that asked (default: none, only `v1`). */
  signingKeys?: { signingKeys(): Promise<SigningKey[]> };
}

// Every repository of the services, as one transaction sees them.
import type { AccountRepository } from './accounts.ts';
import type { ApiHealthRepository } from './api-health.ts';
import type { AppWebhookRepository } from './app-webhooks.ts';
import type { AppRepository } from './apps.ts';
import type { BulkOperationRepository } from './bulk-operations.ts';
import type { EndpointHealthRepository } from './endpoint-health.ts';
import type { EventLogRepository } from './event-log.ts';
import type { EventPayloadRepository } from './event-payloads.ts';
import type { IdempotencyRepository } from './idempotency-keys.ts';
import type { IdempotentAnswerRepository } from './idempotent-answers.ts';
import type { RevealRepository } from './reveals.ts';
import type { SessionRepository } from './sessions.ts';
import type { ResourceRepository } from './store-resources.ts';
import type { ThrottleRepository } from './throttles.ts';
import type { TokenRepository } from './tokens.ts';
import type { WebhookRecoveryRepository } from './webhook-recovery.ts';
import type { WebhookRepository } from './webhook-records.ts';

/** The repositories bound to one transaction. */
export interface Repositories {
  accounts: AccountRepository;
  sessions: SessionRepository;
  throttles: ThrottleRepository;
  reveals: RevealRepository;
  apps: AppRepository;
  tokens: TokenRepository;
  resources: ResourceRepository;
  webhooks: WebhookRepository;
  idempotency: IdempotencyRepository;
  events: EventLogRepository;
  eventPayloads: EventPayloadRepository;
  idempotentAnswers: IdempotentAnswerRepository;
  apiHealth: ApiHealthRepository;
  endpointHealth: EndpointHealthRepository;
  bulkOperations: BulkOperationRepository;
  appWebhooks: AppWebhookRepository;
  webhookRecovery: WebhookRecoveryRepository;
}

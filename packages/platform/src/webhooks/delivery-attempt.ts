// One attempt of one job: refuse it or send it, then decide from the answer what happens next
// (delivered, retried later, or dead) with the retry policy of the domain.
import type { Clock } from '../domain/clock.ts';
import type { Config } from '../config.ts';
import { classifyStatus, nextState, parseRetryAfter, type AttemptOutcome, type NextState } from '../domain/webhook-backoff.ts';
import type { DeliveryOutcome } from '../storage/ports/rows.ts';
import type { AddressGuard } from './address-guard.ts';
import type { Job } from './delivery-jobs.ts';
import { endpointKeyOf } from './endpoint-key.ts';
import { deliveryHeaders } from './signer.ts';
import type { SendResult, WebhookSender } from './webhook-sender.ts';
import type { WorkerLogger } from './worker-logger.ts';

export type AttemptedOutcome = Exclude<DeliveryOutcome, { cancelled: string }>;

export interface AttemptOptions {
  sender: WebhookSender;
  guard: AddressGuard;
  config: Pick<Config, 'webhooks'>;
  clock: Clock;
  /** [0, 1); jitter of the retry waits. */
  random: () => number;
  logger: WorkerLogger;
}

export class DeliveryAttempts {
  constructor(private readonly options: AttemptOptions) {}

  async run(job: Job): Promise<AttemptedOutcome> {
    const { sender, guard, config, clock, random, logger } = this.options;
    const attemptedAt = clock();
    const attempt = job.attempts + 1;
    const refused = await guard.refusal(job.address);
    // A refusal is a failed attempt like any other: retried on the usual schedule (the name may
    // resolve to a public address again) and dead after the last retry.
    const result: SendResult = refused
      ? { status: null, retryAfter: undefined, responseBody: null, error: `refused: the address ${refused}`, latencyMs: 0 }
      : await sender.send(job.address, deliveryHeaders(job.event, job.webhookId, attemptedAt), job.event.body);
    const now = clock();
    const outcome: AttemptOutcome =
      result.status === null ? { kind: 'failure', status: null } : classifyStatus(result.status, parseRetryAfter(result.retryAfter, now));
    const next = nextState(outcome, attempt, config.webhooks.retrySchedule, now, random);
    if (next.status !== 'delivered') {
      logger.warn(
        {
          delivery_id: job.id,
          webhook_id: job.webhookId,
          topic: job.topic,
          attempt,
          status: result.status,
          error: result.error,
          next: next.status,
        },
        'webhook attempt failed',
      );
    }
    return {
      id: job.id,
      storeId: job.storeId,
      subscriptionId: job.subscriptionId,
      attempts: job.attempts,
      replay: job.replay,
      attempt: { attemptedAt, status: result.status, latencyMs: result.latencyMs, responseBody: result.responseBody, error: result.error },
      endpoint: endpointKeyOf(job),
      next: queueNext(next),
    };
  }
}

/** The domain's next state in the shape the queue records. */
function queueNext(next: NextState): AttemptedOutcome['next'] {
  switch (next.status) {
    case 'delivered':
      return { status: 'delivered' };
    case 'pending':
      return { status: 'pending', nextAttemptAt: next.nextAttemptAt };
    case 'dead':
      return { status: 'dead', disable: next.disable };
  }
}

// The parts a delivery worker runs on, built in one place for the composition root to hand to the
// worker: the sender, the jobs and attempts, the dispatcher, the heartbeat, the breakers and their
// ledger, the outcome recorder and the outage tracker they share. The parts report back to the
// worker that takes them (a job to send, a job done, a write settled); until one does, nothing
// runs, since only the worker's loop puts work into them.
import { randomBytes } from 'node:crypto';
import { systemClock } from '../domain/clock.ts';
import type { DeliveryQueue } from '../storage/ports/delivery-queue.ts';
import { AddressGuard } from './address-guard.ts';
import { BreakerLedger } from './breaker-ledger.ts';
import { ClaimHeartbeat } from './claim-heartbeat.ts';
import { DEFAULT_BREAKER, type EndpointVerdict } from './circuit-breaker.ts';
import { DatabaseOutage } from './database-outage.ts';
import { DeliveryAttempts } from './delivery-attempt.ts';
import { DeliveryJobs, type Job } from './delivery-jobs.ts';
import { EndpointBreakers } from './endpoint-breakers.ts';
import { OriginDispatcher } from './origin-dispatcher.ts';
import { OutcomeRecorder } from './outcome-recorder.ts';
import { WebhookSender } from './webhook-sender.ts';
import type { WebhookWorkerOptions } from './worker-options.ts';
import { silentLogger } from './worker-logger.ts';

/** What the parts ask of the worker that runs them. */
export interface WorkerHooks {
  /** Sends one job and records its outcome; says what the attempt showed of the endpoint. */
  deliver(job: Job): Promise<EndpointVerdict>;
  /** A job left the dispatcher. */
  jobDone(): void;
  /** A batch of writes (outcomes, hand-backs, breaker states) finished. */
  settled(): void;
}

export interface WorkerParts {
  /** The worker's name in the claims it holds. */
  readonly id: string;
  readonly queue: DeliveryQueue;
  readonly outage: DatabaseOutage;
  readonly sender: WebhookSender;
  readonly jobs: DeliveryJobs;
  readonly attempts: DeliveryAttempts;
  readonly dispatcher: OriginDispatcher<Job>;
  readonly heartbeat: ClaimHeartbeat;
  readonly breakers: EndpointBreakers;
  readonly ledger: BreakerLedger | undefined;
  readonly recorder: OutcomeRecorder;
  /** Connects the parts to the one worker that runs them (a second worker is refused). */
  attach(hooks: WorkerHooks): void;
}

/** Builds the parts of one worker from its options; each part's default is said in worker-options.ts. */
export function buildWorkerParts(options: WebhookWorkerOptions): WorkerParts {
  const { config, queue } = options;
  const id = `w_${randomBytes(6).toString('hex')}`;
  const perOrigin = options.perOrigin ?? config.webhookEndpointConcurrency ?? 8;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  let owner: WorkerHooks | undefined;
  const worker = (): WorkerHooks => {
    if (!owner) throw new Error('webhook worker parts used before a worker took them');
    return owner;
  };
  // Wall-clock time: it measures how long the outage lasted, which a frozen test clock cannot.
  const outage = new DatabaseOutage(logger, Date.now);
  const sender = new WebhookSender({
    timeoutMs: config.webhooks.timeoutMs,
    perOrigin,
    publicOnly: config.mode === 'production',
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const attempts = new DeliveryAttempts({
    sender,
    guard: new AddressGuard(config.mode, options.resolve),
    config,
    clock,
    random: options.random ?? Math.random,
    logger,
  });
  const heartbeat = new ClaimHeartbeat({
    queue,
    worker: id,
    leaseMs: options.leaseMs ?? config.webhookClaimLeaseMs,
    clock,
    logger,
    outage,
  });
  const breakers = new EndpointBreakers({
    queue,
    worker: id,
    clock,
    logger,
    outage,
    metrics: options.metrics,
    onHandedBack: (ids) => {
      heartbeat.settle(ids);
      worker().settled();
    },
  });
  const ledger = options.breakerLog
    ? new BreakerLedger({ log: options.breakerLog, clock, logger, outage, onSettled: () => worker().settled() })
    : undefined;
  const dispatcher = new OriginDispatcher<Job>({
    perOrigin,
    perOwner: options.perOwner ?? defaultPerOwner(perOrigin),
    maxInFlight: options.maxInFlight ?? 64,
    send: (job) => worker().deliver(job),
    breaker: { ...DEFAULT_BREAKER, ...options.breaker },
    clock,
    handBack: (jobs, until) =>
      breakers.handBack(
        jobs.map((j) => j.id),
        until,
      ),
    deferBacklog: (backlog, until) => breakers.deferBacklog(backlog, until),
    onBreakerChange: (endpoint, change) => {
      breakers.changed(endpoint, change);
      ledger?.changed(endpoint, change);
    },
    onBreakerForgotten: (endpoint) => breakers.forgotten(endpoint),
    onJobDone: () => worker().jobDone(),
  });
  const recorder = new OutcomeRecorder({
    queue,
    worker: id,
    config,
    clock,
    logger,
    outage,
    onSettled: () => worker().settled(),
    onWritten: (ids) => heartbeat.settle(ids),
  });
  return {
    id,
    queue,
    outage,
    sender,
    jobs: new DeliveryJobs({ box: options.box, storeDomain: config.storeDomain }),
    attempts,
    dispatcher,
    heartbeat,
    breakers,
    ledger,
    recorder,
    attach(hooks) {
      if (owner) throw new Error('these webhook worker parts already belong to a worker');
      owner = hooks;
    },
  };
}

/**
 * Half the per-endpoint cap: one owner whose paths hang holds at most half of an endpoint's slots,
 * and the other owners of that endpoint always have the other half.
 */
function defaultPerOwner(perOrigin: number): number {
  return Math.max(1, Math.floor(perOrigin / 2));
}

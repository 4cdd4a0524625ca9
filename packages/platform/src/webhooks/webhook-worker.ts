// The delivery worker's lifecycle and loop. It claims due deliveries in batches through the
// delivery queue (a claim is a lease, so several workers never send the same row at once), turns
// them into jobs, sends them with bounded concurrency per origin and overall, and hands the
// outcomes to a recorder that writes them in batches. Storage, and which database it is, stays
// behind the queue.
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../domain/clock.ts';
import type { DeliveryQueue } from '../storage/ports.ts';
import { AddressGuard } from './address-guard.ts';
import type { AttemptResult, DeliveryMetrics } from '../services/metrics.ts';
import { DatabaseOutage } from './database-outage.ts';
import { type AttemptedOutcome, DeliveryAttempts } from './delivery-attempt.ts';
import { DeliveryJobs, type Job } from './delivery-jobs.ts';
import { OriginDispatcher } from './origin-dispatcher.ts';
import { OutcomeRecorder } from './outcome-recorder.ts';
import { WebhookSender } from './webhook-sender.ts';
import type { PruneResult, WebhookWorkerOptions } from './worker-options.ts';
import { errorFields, silentLogger, type WorkerLogger } from './worker-logger.ts';

export type { PruneResult, WebhookWorkerOptions } from './worker-options.ts';
export type { WorkerLogger } from './worker-logger.ts';

export class WebhookWorker {
  readonly id = `w_${randomBytes(6).toString('hex')}`;
  /** Attempts this worker has made (HTTP or refused), for tests and benchmarks. */
  attemptsMade = 0;
  private readonly queue: DeliveryQueue;
  private readonly onDeliveriesQueued: (listener: () => void) => () => void;
  private readonly prune: (() => Promise<PruneResult>) | undefined;
  private readonly clock: Clock;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly pruneEveryMs: number;
  private readonly logger: WorkerLogger;
  private readonly metrics: DeliveryMetrics | undefined;
  private readonly sender: WebhookSender;
  private readonly jobs: DeliveryJobs;
  private readonly attempts: DeliveryAttempts;
  private readonly dispatcher: OriginDispatcher<Job>;
  private readonly recorder: OutcomeRecorder;
  private readonly outage: DatabaseOutage;
  private running = false;
  private loop: Promise<void> | undefined;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private lastPrune = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(options: WebhookWorkerOptions) {
    const { config } = options;
    const perOrigin = options.perOrigin ?? 8;
    this.queue = options.queue;
    this.onDeliveriesQueued = options.onDeliveriesQueued;
    this.prune = options.prune;
    this.clock = options.clock ?? systemClock;
    this.batchSize = options.batchSize ?? 100;
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pruneEveryMs = options.pruneEveryMs ?? 3_600_000;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics;
    // Wall-clock time: it measures how long the outage lasted, which a frozen test clock cannot.
    this.outage = new DatabaseOutage(this.logger, Date.now);
    this.sender = new WebhookSender({
      timeoutMs: config.webhooks.timeoutMs,
      perOrigin,
      publicOnly: config.mode === 'production',
      ...(options.resolve ? { resolve: options.resolve } : {}),
    });
    this.jobs = new DeliveryJobs({ box: options.box, storeDomain: config.storeDomain });
    this.attempts = new DeliveryAttempts({
      sender: this.sender,
      guard: new AddressGuard(config.mode, options.resolve),
      config,
      clock: this.clock,
      random: options.random ?? Math.random,
      logger: this.logger,
    });
    this.dispatcher = new OriginDispatcher<Job>({
      perOrigin,
      maxInFlight: options.maxInFlight ?? 64,
      send: (job) => this.deliver(job),
      onJobDone: () => {
        // Half the buffer drained: claim more now rather than at the next poll.
        if (this.dispatcher.buffered < this.dispatcher.capacity / 2) this.wake();
        this.checkIdle();
      },
    });
    this.recorder = new OutcomeRecorder({
      queue: this.queue,
      worker: this.id,
      config,
      clock: this.clock,
      logger: this.logger,
      outage: this.outage,
      onSettled: () => this.checkIdle(),
    });
  }

  async start(): Promise<void> {
    if (this.running) return;
    // Where only one process can hold claims, those left by a process that died are released at
    // once instead of waiting for their lease to run out.
    if (this.queue.singleProcess) await this.queue.releaseAllClaims();
    this.running = true;
    this.unsubscribe = this.onDeliveriesQueued(() => this.wake());
    this.loop = this.run();
  }

  /** Stops claiming, lets requests in flight finish (each has its deadline) and writes their outcomes. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.unsubscribe?.();
    this.wake();
    await this.loop;
    await this.whenIdle();
    await this.sender.close();
  }

  /** Look for due deliveries now (a commit in this process, a redelivery). */
  wake(): void {
    this.woken = true;
    const fn = this.wakeUp;
    this.wakeUp = undefined;
    fn?.();
  }

  /** Resolves when nothing is queued, in flight or waiting to be written. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.dispatcher.buffered === 0 && this.recorder.idle;
  }

  private checkIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let full = false;
      try {
        const room = Math.min(this.batchSize, this.dispatcher.room);
        if (room > 0) {
          const jobs = await this.claim(room);
          full = jobs.length === room;
          for (const job of jobs) this.dispatcher.enqueue(job);
        }
        await this.pruneWhenDue();
        this.outage.succeeded();
      } catch (err) {
        if (!this.outage.failed(err)) this.logger.error({ err: errorFields(err) }, 'webhook worker: claim failed');
      }
      if (this.outage.active) {
        // Wait out the back-off rather than the poll interval (stop() still ends the wait at once).
        if (!this.running) break;
        await this.sleep(this.outage.waitMs);
        continue;
      }
      // A full batch means more is probably due: claim again at once while the buffer has room.
      if (full && this.dispatcher.room > 0) continue;
      if (!this.running) break;
      if (this.woken) continue;
      await this.sleep();
    }
  }

  /** Until `ms` (default `pollMs`) has passed or `wake()` is called, whichever comes first. */
  private sleep(ms = this.pollMs): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Claims up to `limit` due deliveries; those that must not go out are recorded as cancelled. */
  private async claim(limit: number): Promise<Job[]> {
    const now = this.clock();
    const rows = await this.queue.claim({
      worker: this.id,
      now,
      leaseUntil: now + this.leaseMs,
      limit,
      excludeSubscriptions: this.dispatcher.saturatedSubscriptions(),
    });
    const { jobs, cancelled } = this.jobs.prepare(rows, now);
    if (cancelled.length > 0) this.recorder.record(...cancelled);
    return jobs;
  }

  private async deliver(job: Job): Promise<void> {
    this.attemptsMade++;
    this.metrics?.attemptStarted();
    let outcome: AttemptedOutcome | undefined;
    try {
      outcome = await this.attempts.run(job);
    } finally {
      // An attempt that threw has no outcome to record; it is counted as an error.
      this.metrics?.attemptFinished(outcome ? attemptResult(outcome) : 'error');
    }
    this.recorder.record(outcome);
  }

  private async pruneWhenDue(): Promise<void> {
    if (!this.prune || this.pruneEveryMs <= 0 || this.clock() - this.lastPrune < this.pruneEveryMs) return;
    this.lastPrune = this.clock();
    const pruned = await this.prune();
    if (pruned.deliveries + pruned.attempts + (pruned.idempotencyKeys ?? 0) > 0)
      this.logger.info(pruned, 'pruned the webhook delivery log and expired idempotency keys');
  }
}

/** An attempt's outcome as the metrics name it. */
function attemptResult(outcome: AttemptedOutcome): AttemptResult {
  return outcome.next.status === 'pending' ? 'retry' : outcome.next.status;
}

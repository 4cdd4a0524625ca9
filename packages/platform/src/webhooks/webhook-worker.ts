// The delivery worker's lifecycle and loop. It claims due deliveries in batches through the
// delivery queue (a claim is a lease, so several workers never send the same row at once), turns
// them into jobs, sends them with bounded concurrency per origin and overall, and hands the
// outcomes to a recorder that writes them in batches. A heartbeat renews the claims it still
// holds; on stop it hands back what it has not sent. Storage, and which database it is, stays
// behind the queue. The worker builds none of its parts: the composition root builds them
// (worker-parts.ts) and hands them over.
import { systemClock, type Clock } from '../domain/clock.ts';
import type { DeliveryQueue } from '../storage/ports/delivery-queue.ts';
import type { ClaimedDelivery } from '../storage/ports/rows.ts';
import type { SigningKey } from '../domain/webhook-signing-keys.ts';
import type { ClaimHeartbeat } from './claim-heartbeat.ts';
import type { BreakerLedger } from './breaker-ledger.ts';
import { type EndpointVerdict, verdictOf } from './circuit-breaker.ts';
import type { EndpointBreakers } from './endpoint-breakers.ts';
import type { AttemptResult, DeliveryMetrics } from '../services/metrics.ts';
import type { DatabaseOutage } from './database-outage.ts';
import type { AttemptedOutcome, DeliveryAttempts } from './delivery-attempt.ts';
import { type DeliveryJobs, type Job, wantsAsymmetric } from './delivery-jobs.ts';
import type { OriginDispatcher } from './origin-dispatcher.ts';
import type { OutcomeRecorder } from './outcome-recorder.ts';
import type { WebhookSender } from './webhook-sender.ts';
import type { PruneResult, WebhookWorkerOptions } from './worker-options.ts';
import type { WorkerParts } from './worker-parts.ts';
import { errorFields, silentLogger, type WorkerLogger } from './worker-logger.ts';

export type { PruneResult, WebhookWorkerOptions } from './worker-options.ts';

/** What a stop did: attempts cut off at the deadline, and claims handed back for another worker. */
export interface WorkerStopReport {
  abandoned: number;
  released: number;
}
export type { WorkerLogger } from './worker-logger.ts';

export class WebhookWorker {
  readonly id: string;
  /** Attempts this worker has made (HTTP or refused), for tests and benchmarks. */
  attemptsMade = 0;
  private readonly queue: DeliveryQueue;
  private readonly onDeliveriesQueued: (listener: () => void) => () => void;
  private readonly prune: (() => Promise<PruneResult>) | undefined;
  private readonly clock: Clock;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly pruneEveryMs: number;
  private readonly logger: WorkerLogger;
  private readonly metrics: DeliveryMetrics | undefined;
  private readonly sender: WebhookSender;
  private readonly jobs: DeliveryJobs;
  private readonly attempts: DeliveryAttempts;
  private readonly dispatcher: OriginDispatcher<Job>;
  private readonly recorder: OutcomeRecorder;
  private readonly heartbeat: ClaimHeartbeat;
  private readonly outage: DatabaseOutage;
  private readonly breakers: EndpointBreakers;
  private readonly ledger: BreakerLedger | undefined;
  private running = false;
  private stopping: Promise<WorkerStopReport> | undefined;
  /** Set when a stop ran out of time: outcomes of the attempts cut off are not recorded. */
  private abandoned = false;
  private loop: Promise<void> | undefined;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private lastPrune = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly bulkExports: WebhookWorkerOptions['bulkExports'];
  private readonly signingKeys: WebhookWorkerOptions['signingKeys'];

  /** Runs on `parts` (built from the same options by buildWorkerParts); the options give the loop's own settings. */
  constructor(parts: WorkerParts, options: WebhookWorkerOptions) {
    this.id = parts.id;
    this.queue = parts.queue;
    this.outage = parts.outage;
    this.sender = parts.sender;
    this.jobs = parts.jobs;
    this.attempts = parts.attempts;
    this.dispatcher = parts.dispatcher;
    this.heartbeat = parts.heartbeat;
    this.breakers = parts.breakers;
    this.ledger = parts.ledger;
    this.recorder = parts.recorder;
    this.onDeliveriesQueued = options.onDeliveriesQueued;
    this.prune = options.prune;
    this.bulkExports = options.bulkExports;
    this.signingKeys = options.signingKeys;
    this.clock = options.clock ?? systemClock;
    this.batchSize = options.batchSize ?? 250;
    this.pollMs = options.pollMs ?? 500;
    this.pruneEveryMs = options.pruneEveryMs ?? 3_600_000;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics;
    parts.attach({
      deliver: (job) => this.deliver(job),
      jobDone: () => {
        // Half the buffer drained: claim more now rather than at the next poll.
        if (this.dispatcher.buffered < this.dispatcher.capacity / 2) this.wake();
        this.checkIdle();
      },
      settled: () => this.checkIdle(),
    });
  }

  async start(): Promise<void> {
    if (this.running) return;
    // Where only one process can hold claims, those left by a process that died are released at
    // once instead of waiting for their lease to run out.
    if (this.queue.singleProcess) await this.queue.releaseAllClaims();
    this.running = true;
    this.stopping = undefined;
    this.abandoned = false;
    this.unsubscribe = this.onDeliveriesQueued(() => this.wake());
    this.heartbeat.start();
    this.loop = this.run();
    this.bulkExports?.start(this.outage);
  }

  /**
   * Stops claiming, hands back the deliveries not sent yet, lets the attempts in flight finish and
   * writes their outcomes, then releases every claim this worker still holds so another worker
   * takes those deliveries at once. With `timeoutMs`, attempts still running by then are cut off
   * (not recorded: they go out again, which receivers de-duplicate by webhook id).
   */
  stop(options: { timeoutMs?: number } = {}): Promise<WorkerStopReport> {
    if (!this.running) return this.stopping ?? Promise.resolve({ abandoned: 0, released: 0 });
    this.running = false;
    this.stopping = this.shutDown(options.timeoutMs);
    return this.stopping;
  }

  private async shutDown(timeoutMs: number | undefined): Promise<WorkerStopReport> {
    this.unsubscribe?.();
    this.wake();
    await Promise.all([this.loop, this.bulkExports?.stop()]);
    const dropped = this.dispatcher.dropQueued();
    this.heartbeat.settle(dropped.map((job) => job.id));
    this.checkIdle();
    let abandoned = 0;
    if (!(await finishesWithin(this.whenIdle(), timeoutMs))) {
      abandoned = this.dispatcher.inFlight;
      this.abandoned = true;
      await this.sender.destroy();
      await this.whenIdle();
    }
    let released = 0;
    try {
      released = await this.queue.releaseClaims(this.id);
    } catch (err) {
      // Not fatal: the claims run out with their lease instead.
      this.logger.error({ err: errorFields(err) }, 'webhook worker: could not release its claims');
    }
    this.heartbeat.stop();
    await this.sender.close();
    return { abandoned, released };
  }

  /** Renews the claims held now (the heartbeat does this every third of the lease). */
  renewClaims(): Promise<number> {
    return this.heartbeat.beat();
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
    return this.dispatcher.buffered === 0 && this.recorder.idle && this.breakers.idle && (this.ledger?.idle ?? true);
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
        // What open breakers hand back or put off is written first, so this claim cannot bring it.
        await this.breakers.written();
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
      leaseUntil: this.heartbeat.leaseUntil(),
      limit,
      excludeSubscriptions: this.dispatcher.saturatedSubscriptions(),
    });
    // A row this worker already holds came back only because its lease ran out before a renewal
    // (a stalled process): the claim just renewed it, and the attempt under way must not be doubled.
    let fresh = rows.filter((r) => !this.heartbeat.holds(r.id));
    const { signingKeys, unsigned } = await this.asymmetricKeys(fresh);
    // Without the keys, the deliveries that need them are not held: their leases run out and a
    // later claim tries again, while the others go out now.
    if (unsigned) fresh = fresh.filter((r) => !wantsAsymmetric(r));
    this.heartbeat.hold(fresh.map((r) => r.id));
    const { jobs, cancelled } = this.jobs.prepare(fresh, now, signingKeys);
    if (cancelled.length > 0) this.recorder.record(...cancelled);
    return jobs;
  }

  /** The platform keys for the `v1a` signatures the claimed rows need, if any; `unsigned` when they could not be read. */
  private async asymmetricKeys(rows: readonly ClaimedDelivery[]): Promise<{ signingKeys: SigningKey[]; unsigned: boolean }> {
    if (!this.signingKeys || !rows.some(wantsAsymmetric)) return { signingKeys: [], unsigned: false };
    try {
      return { signingKeys: await this.signingKeys.signingKeys(), unsigned: false };
    } catch (err) {
      this.logger.warn({ err: errorFields(err) }, 'could not read the webhook signing keys: deliveries that need v1a signatures wait');
      return { signingKeys: [], unsigned: true };
    }
  }

  /** Sends one job and records its outcome; says what the attempt showed of the endpoint. */
  private async deliver(job: Job): Promise<EndpointVerdict> {
    this.attemptsMade++;
    this.metrics?.attemptStarted();
    let outcome: AttemptedOutcome | undefined;
    try {
      outcome = await this.attempts.run(job);
    } finally {
      // An attempt that threw has no outcome to record; it is counted as an error.
      this.metrics?.attemptFinished(outcome ? attemptResult(outcome) : 'error');
    }
    // Cut off by a stop that ran out of time: the claim is released and the delivery goes out again.
    if (this.abandoned) return 'neutral';
    this.recorder.record(outcome);
    return verdictOf(outcome.attempt);
  }

  private async pruneWhenDue(): Promise<void> {
    if (!this.prune || this.pruneEveryMs <= 0 || this.clock() - this.lastPrune < this.pruneEveryMs) return;
    this.lastPrune = this.clock();
    const pruned = await this.prune();
    const credentials = Object.values(pruned.credentials ?? {}).reduce((sum, n) => sum + n, 0);
    const other = (pruned.idempotencyKeys ?? 0) + (pruned.bulkOperations ?? 0) + (pruned.endpointHealth ?? 0);
    if (pruned.deliveries + pruned.attempts + other + credentials > 0)
      this.logger.info(pruned, 'pruned the webhook delivery log, expired idempotency keys and credentials past their last use');
  }
}

/** Whether `work` settles within `timeoutMs` (always, without a timeout). */
async function finishesWithin(work: Promise<void>, timeoutMs: number | undefined): Promise<boolean> {
  if (timeoutMs === undefined) {
    await work;
    return true;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([work.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** An attempt's outcome as the metrics name it. */
function attemptResult(outcome: AttemptedOutcome): AttemptResult {
  return outcome.next.status === 'pending' ? 'retry' : outcome.next.status;
}

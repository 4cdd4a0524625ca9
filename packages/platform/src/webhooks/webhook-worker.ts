// The delivery worker (PRODUCT.md §7, §10). Claims due deliveries in batches (PostgreSQL: FOR
// UPDATE SKIP LOCKED with a lease, so several workers never hold the same row; SQLite: one atomic
// UPDATE … RETURNING), sends them with bounded concurrency per origin and overall, and writes the
// outcomes in batches (attempt rows, next state, subscription health) in one transaction each.
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { checkWebhookAddress, isNonPublicAddress } from '../domain/ssrf.ts';
import { systemClock, type Clock } from '../services/clock.ts';
import type { Db } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';
import { classifyStatus, nextState, parseRetryAfter, type AttemptOutcome, type NextState } from './backoff.ts';
import { DeliveryLog } from './delivery-log.ts';
import { onOutboxCommit } from './outbox.ts';
import { webhookHeaders } from './signer.ts';
import { WebhookSender, type SendResult } from './webhook-sender.ts';

export interface WorkerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WebhookWorkerOptions {
  db: Db;
  box: SecretBox;
  config: Pick<Config, 'mode' | 'storeDomain' | 'webhooks'>;
  clock?: Clock;
  /** [0, 1); jitter of the retry waits. */
  random?: () => number;
  /** Rows claimed per query (default 100). */
  batchSize?: number;
  /** Requests in flight over all receivers (default 64). */
  maxInFlight?: number;
  /** Requests in flight per origin (scheme, host, port), default 8: a slow receiver holds at most 8 of the 64. */
  perOrigin?: number;
  /** How often to look for due rows when nothing woke the worker (default 500 ms). */
  pollMs?: number;
  /** How long a claim is held before another worker may take the row (default 60 s). */
  leaseMs?: number;
  /** Name resolution for the production SSRF check (default: the system resolver). */
  resolve?: (hostname: string) => Promise<string[]>;
  /** How often old log rows are pruned (default hourly; 0 = never). */
  pruneEveryMs?: number;
  logger?: WorkerLogger;
}

interface Job {
  id: number;
  webhookId: string;
  eventId: string;
  topic: string;
  subscriptionId: number;
  address: string;
  origin: string;
  apiVersion: string;
  secret: string;
  shopDomain: string;
  triggeredAt: number;
  body: string;
  attempts: number;
}

type Outcome =
  | { job: Pick<Job, 'id' | 'subscriptionId' | 'attempts'>; cancelled: string }
  | { job: Pick<Job, 'id' | 'subscriptionId' | 'attempts'>; cancelled?: undefined; attemptedAt: number; result: SendResult; next: NextState };

type SqliteStatement = { run(...params: unknown[]): { changes: number }; all(...params: unknown[]): unknown[] };

interface OriginQueue {
  inflight: number;
  queue: Job[];
  subscriptions: Set<number>;
}

const silent: WorkerLogger = { info() {}, warn() {}, error() {} };

async function resolveAll(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
}

export class WebhookWorker {
  readonly id = `w_${randomBytes(6).toString('hex')}`;
  /** Attempts this worker has made (HTTP or refused), for tests and benchmarks. */
  attemptsMade = 0;
  readonly log: DeliveryLog;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly batchSize: number;
  private readonly maxInFlight: number;
  private readonly perOrigin: number;
  /** Jobs held in memory per origin before its subscriptions are left out of claims. */
  private readonly perOriginBuffer: number;
  private readonly maxBuffered: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly pruneEveryMs: number;
  private readonly resolve: (hostname: string) => Promise<string[]>;
  private readonly logger: WorkerLogger;
  private readonly sender: WebhookSender;
  private readonly secrets = new Map<string, string>();
  private readonly origins = new Map<string, OriginQueue>();
  private buffered = 0;
  private inflight = 0;
  private outcomes: Outcome[] = [];
  private flushing: Promise<void> | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private lastPrune = 0;
  private idleWaiters: (() => void)[] = [];
  private sqliteStatements: { claim: SqliteStatement; load: SqliteStatement } | undefined;
  private writeStatements: Record<WriteKind, SqliteStatement> | undefined;

  constructor(private readonly options: WebhookWorkerOptions) {
    this.db = options.db;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.batchSize = options.batchSize ?? 100;
    this.maxInFlight = options.maxInFlight ?? 64;
    this.perOrigin = options.perOrigin ?? 8;
    this.perOriginBuffer = this.perOrigin * 8;
    this.maxBuffered = this.maxInFlight * 4;
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pruneEveryMs = options.pruneEveryMs ?? 3_600_000;
    this.resolve = options.resolve ?? resolveAll;
    this.logger = options.logger ?? silent;
    this.log = new DeliveryLog(options.db, this.clock, options.config);
    this.sender = new WebhookSender({ timeoutMs: options.config.webhooks.timeoutMs, perOrigin: this.perOrigin, publicOnly: options.config.mode === 'production' });
  }

  private get k(): Kysely<Database> {
    return this.db.kysely;
  }

  async start(): Promise<void> {
    if (this.running) return;
    // SQLite has one worker process: claims left by a process that died are released at once
    // instead of waiting for their lease to run out.
    if (this.db.dialect === 'sqlite') {
      await this.k.updateTable('webhook_deliveries').set({ claimed_by: null, claimed_until: null }).where('status', '=', 'pending').where('claimed_until', 'is not', null).execute();
    }
    this.running = true;
    this.unsubscribe = onOutboxCommit(this.db, () => this.wake());
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
    if (this.buffered === 0 && this.outcomes.length === 0 && !this.flushing) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private checkIdle(): void {
    if (this.buffered === 0 && this.outcomes.length === 0 && !this.flushing) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let full = false;
      try {
        const room = Math.min(this.batchSize, this.maxBuffered - this.buffered);
        if (room > 0) {
          const jobs = await this.claim(room);
          full = jobs.length === room;
          for (const job of jobs) this.enqueue(job);
        }
        if (this.pruneEveryMs > 0 && this.clock() - this.lastPrune >= this.pruneEveryMs) {
          this.lastPrune = this.clock();
          const pruned = await this.log.prune();
          if (pruned.deliveries + pruned.attempts > 0) this.logger.info(pruned, 'pruned the webhook delivery log');
        }
      } catch (err) {
        this.logger.error({ err: { message: (err as Error).message } }, 'webhook worker: claim failed');
      }
      if (full && this.buffered < this.maxBuffered) continue;
      if (!this.running) break;
      if (this.woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.wakeUp = undefined;
          resolve();
        }, this.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Claims up to `limit` due rows and loads what sending them needs; cancels those that must not go out. */
  private async claim(limit: number): Promise<Job[]> {
    const now = this.clock();
    const excluded = [...this.origins.values()].filter((o) => o.queue.length + o.inflight >= this.perOriginBuffer).flatMap((o) => [...o.subscriptions]);
    const rows = this.db.sqlite && !this.db.sqlite.inTransaction ? this.claimSqlite(this.db.sqlite, limit, excluded, now) : await this.claimKysely(limit, excluded, now);
    return this.prepareJobs(rows);
  }

  /**
   * SQLite: one synchronous claim and load on the raw connection. Safe only while no transaction
   * of the (shared) connection is open, which the caller checks: nothing can interleave with
   * synchronous statements, so the claim never sees or joins an uncommitted change.
   */
  private claimSqlite(sqlite: NonNullable<Db['sqlite']>, limit: number, excluded: number[], now: number): LoadedRow[] {
    const st = (this.sqliteStatements ??= {
      claim: sqlite.prepare<unknown[]>(`
        update webhook_deliveries set claimed_by = ?, claimed_until = ?
        where id in (
          select id from webhook_deliveries
          where status = 'pending' and next_attempt_at <= ? and (claimed_until is null or claimed_until < ?)
            and subscription_id not in (select value from json_each(?))
          order by next_attempt_at, id
          limit ?
        )
        returning id`),
      load: sqlite.prepare<unknown[]>(`${LOAD_SQL} where d.id in (select value from json_each(?)) order by d.next_attempt_at, d.id`),
    });
    const ids = withoutSync(sqlite, () => st.claim.all(this.id, now + this.leaseMs, now, now, JSON.stringify(excluded), limit) as { id: number }[]).map((r) => r.id);
    if (ids.length === 0) return [];
    return st.load.all(JSON.stringify(ids)) as LoadedRow[];
  }

  private async claimKysely(limit: number, excluded: number[], now: number): Promise<LoadedRow[]> {
    const notIn = excluded.length > 0 ? sql`and subscription_id not in (${sql.join(excluded)})` : sql``;
    const lock = this.db.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    // `status = 'pending'` is written out so that SQLite can use the partial index.
    const claimed = await sql<{ id: number }>`
      update webhook_deliveries set claimed_by = ${this.id}, claimed_until = ${now + this.leaseMs}
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${now} and (claimed_until is null or claimed_until < ${now}) ${notIn}
        order by next_attempt_at, id
        limit ${limit}
        ${lock}
      )
      returning id`.execute(this.k);
    if (claimed.rows.length === 0) return [];
    const ids = claimed.rows.map((r) => Number(r.id));
    const rows = await this.k
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .innerJoin('stores as st', 'st.id', 'd.store_id')
      .leftJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .leftJoin('apps as a', 'a.id', 'd.app_id')
      .leftJoin('installations as i', (j) => j.onRef('i.store_id', '=', 'd.store_id').onRef('i.app_id', '=', 'd.app_id'))
      .leftJoin('private_apps as p', 'p.id', 'd.private_app_id')
      .select([
        'd.id', 'd.webhook_id', 'd.event_id', 'd.topic', 'd.subscription_id', 'd.attempts', 'd.app_id', 'd.private_app_id',
        'e.payload', 'e.created_at as event_at', 'st.name as store_name',
        's.id as sub_id', 's.address', 's.api_version', 's.disabled_at',
        'a.client_secret_enc', 'i.id as installation_id', 'i.uninstalled_at', 'i.installed_at',
        'p.id as private_id', 'p.webhook_secret_enc', 'p.revoked_at',
      ])
      .where('d.id', 'in', ids)
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .execute();
    return rows as LoadedRow[];
  }

  private prepareJobs(rows: LoadedRow[]): Job[] {
    const jobs: Job[] = [];
    const cancelled: Outcome[] = [];
    for (const r of rows) {
      const base = { id: r.id, subscriptionId: r.subscription_id, attempts: r.attempts };
      let reason: string | undefined;
      if (r.sub_id === null) reason = 'the subscription was deleted';
      else if (r.disabled_at !== null) reason = 'the subscription is disabled';
      else if (r.app_id !== null && r.topic !== 'app/uninstalled' && (r.installation_id === null || r.uninstalled_at !== null || r.installed_at! > r.event_at)) reason = 'the app was uninstalled';
      else if (r.private_app_id !== null && (r.private_id === null || r.revoked_at !== null)) reason = 'the private app was revoked';
      const enc = r.client_secret_enc ?? r.webhook_secret_enc;
      if (!reason && !enc) reason = 'the app no longer exists';
      if (reason) {
        cancelled.push({ job: base, cancelled: reason });
        continue;
      }
      jobs.push({
        ...base,
        webhookId: r.webhook_id,
        eventId: r.event_id,
        topic: r.topic,
        address: r.address!,
        origin: originOf(r.address!),
        apiVersion: r.api_version!,
        secret: this.openSecret(enc!),
        shopDomain: `${r.store_name}.${this.options.config.storeDomain}`,
        triggeredAt: r.event_at,
        body: r.payload,
      });
    }
    if (cancelled.length > 0) this.record(...cancelled);
    return jobs;
  }

  private openSecret(enc: string): string {
    let plain = this.secrets.get(enc);
    if (plain === undefined) {
      if (this.secrets.size > 10_000) this.secrets.clear();
      plain = this.options.box.open(enc);
      this.secrets.set(enc, plain);
    }
    return plain;
  }

  private enqueue(job: Job): void {
    let q = this.origins.get(job.origin);
    if (!q) this.origins.set(job.origin, (q = { inflight: 0, queue: [], subscriptions: new Set() }));
    q.subscriptions.add(job.subscriptionId);
    q.queue.push(job);
    this.buffered++;
    this.pump(q);
  }

  private pump(q: OriginQueue): void {
    while (q.inflight < this.perOrigin && this.inflight < this.maxInFlight && q.queue.length > 0) {
      const job = q.queue.shift()!;
      q.inflight++;
      this.inflight++;
      void this.deliver(job).finally(() => {
        q.inflight--;
        this.inflight--;
        this.buffered--;
        this.pump(q);
        // A free global slot may unblock another origin's queue.
        if (this.inflight < this.maxInFlight) for (const other of this.origins.values()) if (other.queue.length > 0) this.pump(other);
        if (q.inflight === 0 && q.queue.length === 0) this.origins.delete(job.origin);
        if (this.buffered < this.maxBuffered / 2) this.wake();
        this.checkIdle();
      });
    }
  }

  private async deliver(job: Job): Promise<void> {
    const attemptedAt = this.clock();
    const attempt = job.attempts + 1;
    this.attemptsMade++;
    let result: SendResult;
    const refused = await this.refusal(job.address);
    if (refused) {
      result = { status: null, retryAfter: undefined, responseBody: null, error: `refused: the address ${refused}`, latencyMs: 0 };
    } else {
      result = await this.sender.send(job.address, webhookHeaders(job.secret, job, attemptedAt), job.body);
    }
    const now = this.clock();
    const outcome: AttemptOutcome = result.status === null ? { kind: 'failure', status: null } : classifyStatus(result.status, parseRetryAfter(result.retryAfter, now));
    const next = nextState(outcome, attempt, this.options.config.webhooks.retrySchedule, now, this.random);
    if (next.status !== 'delivered') this.logger.warn({ delivery_id: job.id, webhook_id: job.webhookId, topic: job.topic, attempt, status: result.status, error: result.error, next: next.status }, 'webhook attempt failed');
    this.record({ job, attemptedAt, result, next });
  }

  /** Production: the address rules again, and every resolved IP public (DNS can change). */
  private async refusal(address: string): Promise<string | undefined> {
    const mode = this.options.config.mode;
    const problem = checkWebhookAddress(address, mode);
    if (problem || mode !== 'production') return problem;
    const host = new URL(address).hostname.replace(/^\[|\]$/g, '');
    try {
      const ips = await this.resolve(host);
      if (ips.length === 0) return 'could not be resolved';
      if (ips.some((ip) => isNonPublicAddress(ip))) return 'resolves to a private, loopback or link-local address';
    } catch {
      return 'could not be resolved';
    }
    return undefined;
  }

  private record(...outcomes: Outcome[]): void {
    this.outcomes.push(...outcomes);
    if (!this.flushing) this.flushing = this.flush();
  }

  /** Group commit: whatever finished while the previous batch was being written goes in the next. */
  private async flush(): Promise<void> {
    try {
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.outcomes.length > 0) {
        const batch = this.outcomes.splice(0, 500);
        try {
          await this.write(batch);
        } catch (err) {
          // The rows stay claimed until their lease ends, then go out again (at least once).
          this.logger.error({ err: { message: (err as Error).message }, deliveries: batch.length }, 'webhook worker: could not record outcomes');
        }
      }
    } finally {
      this.flushing = undefined;
      this.checkIdle();
    }
  }

  private async write(batch: Outcome[]): Promise<void> {
    const plan = writePlan(batch, { now: this.clock(), worker: this.id, disableAfter: this.options.config.webhooks.disableAfterDead });
    const sqlite = this.db.sqlite;
    if (sqlite && !sqlite.inTransaction) {
      // One synchronous transaction (one sync to disk) on the raw connection; see claimSqlite.
      const statements = (this.writeStatements ??= Object.fromEntries(Object.entries(WRITE_SQL).map(([k, text]) => [k, sqlite.prepare<unknown[]>(text)])) as unknown as Record<WriteKind, SqliteStatement>);
      withoutSync(sqlite, () =>
        sqlite.transaction(() => {
          let step = plan.next(0);
          while (!step.done) step = plan.next(statements[step.value.kind].run(...step.value.args).changes);
        })(),
      );
    } else {
      const pg = this.db.dialect === 'postgres';
      await this.k.transaction().execute(async (trx) => {
        let step = plan.next(0);
        while (!step.done) {
          let n = 0;
          const text = pg ? WRITE_SQL[step.value.kind].replace(/\?/g, () => `$${++n}`) : WRITE_SQL[step.value.kind];
          const res = await trx.executeQuery(CompiledQuery.raw(text, step.value.args));
          step = plan.next(Number(res.numAffectedRows ?? 0n));
        }
      });
    }
    for (const o of batch) {
      if (o.cancelled === undefined && o.next.status === 'dead') this.logger.warn({ delivery_id: o.job.id, subscription_id: o.job.subscriptionId, disabled: o.next.disable ?? null }, 'webhook delivery is dead');
    }
  }
}

const LOAD_SQL = `
  select d.id, d.webhook_id, d.event_id, d.topic, d.subscription_id, d.attempts, d.app_id, d.private_app_id,
    e.payload, e.created_at as event_at, st.name as store_name,
    s.id as sub_id, s.address, s.api_version, s.disabled_at,
    a.client_secret_enc, i.id as installation_id, i.uninstalled_at, i.installed_at,
    p.id as private_id, p.webhook_secret_enc, p.revoked_at
  from webhook_deliveries d
  join webhook_events e on e.id = d.event_id
  join stores st on st.id = d.store_id
  left join webhook_subscriptions s on s.id = d.subscription_id
  left join apps a on a.id = d.app_id
  left join installations i on i.store_id = d.store_id and i.app_id = d.app_id
  left join private_apps p on p.id = d.private_app_id`;

/** What a claim loads for each delivery. */
interface LoadedRow {
  id: number;
  webhook_id: string;
  event_id: string;
  topic: string;
  subscription_id: number;
  attempts: number;
  app_id: number | null;
  private_app_id: number | null;
  payload: string;
  event_at: number;
  store_name: string;
  sub_id: number | null;
  address: string | null;
  api_version: string | null;
  disabled_at: number | null;
  client_secret_enc: string | null;
  installation_id: number | null;
  uninstalled_at: number | null;
  installed_at: number | null;
  private_id: number | null;
  webhook_secret_enc: string | null;
  revoked_at: number | null;
}

// Outcome writes, the same SQL on both dialects (`?` becomes `$n` on PostgreSQL). Every delivery
// update is guarded by `claimed_by`: a worker whose lease ran out does not overwrite the new holder.
const WRITE_SQL = {
  attempt: 'insert into webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response_body, error) values (?, ?, ?, ?, ?, ?)',
  delivered: "update webhook_deliveries set status = 'delivered', attempts = ?, last_status = ?, last_error = null, claimed_by = null, claimed_until = null, updated_at = ? where id = ? and claimed_by = ? and status = 'pending'",
  cancelled: "update webhook_deliveries set status = 'cancelled', last_error = ?, claimed_by = null, claimed_until = null, updated_at = ? where id = ? and claimed_by = ? and status = 'pending'",
  retry: "update webhook_deliveries set attempts = ?, last_status = ?, last_error = ?, next_attempt_at = ?, claimed_by = null, claimed_until = null, updated_at = ? where id = ? and claimed_by = ? and status = 'pending'",
  dead: "update webhook_deliveries set status = 'dead', attempts = ?, last_status = ?, last_error = ?, claimed_by = null, claimed_until = null, updated_at = ? where id = ? and claimed_by = ? and status = 'pending'",
  resetStreak: 'update webhook_subscriptions set dead_streak = 0 where id = ? and dead_streak > 0',
  bumpStreak: 'update webhook_subscriptions set dead_streak = dead_streak + 1 where id = ?',
  disable: 'update webhook_subscriptions set disabled_at = ?, disabled_reason = ?, updated_at = ? where id = ? and disabled_at is null',
  disableAfterStreak: 'update webhook_subscriptions set disabled_at = ?, disabled_reason = ?, updated_at = ? where id = ? and dead_streak >= ? and disabled_at is null',
} as const;
type WriteKind = keyof typeof WRITE_SQL;
type WriteStep = { kind: WriteKind; args: (string | number | null)[] };

/**
 * The statements that record a batch of outcomes, in order; each `yield` receives the number of
 * rows the statement changed (subscription health moves only when the delivery row was ours).
 */
function* writePlan(batch: Outcome[], ctx: { now: number; worker: string; disableAfter: number }): Generator<WriteStep, void, number> {
  const { now, worker } = ctx;
  const healthy = new Set<number>();
  for (const o of batch) {
    if (o.cancelled !== undefined) {
      yield { kind: 'cancelled', args: [o.cancelled, now, o.job.id, worker] };
      continue;
    }
    const r = o.result;
    yield { kind: 'attempt', args: [o.job.id, o.attemptedAt, r.status, r.latencyMs, r.responseBody, r.error] };
    const attempts = o.job.attempts + 1;
    const error = r.error ?? (r.status !== null ? `HTTP ${r.status}` : null);
    if (o.next.status === 'delivered') {
      if ((yield { kind: 'delivered', args: [attempts, r.status, now, o.job.id, worker] }) > 0) healthy.add(o.job.subscriptionId);
    } else if (o.next.status === 'pending') {
      yield { kind: 'retry', args: [attempts, r.status, error, o.next.nextAttemptAt, now, o.job.id, worker] };
    } else if ((yield { kind: 'dead', args: [attempts, r.status, error, now, o.job.id, worker] }) > 0) {
      healthy.delete(o.job.subscriptionId);
      if (o.next.disable) {
        yield { kind: 'disable', args: [now, o.next.disable, now, o.job.subscriptionId] };
      } else {
        yield { kind: 'bumpStreak', args: [o.job.subscriptionId] };
        yield { kind: 'disableAfterStreak', args: [now, `${ctx.disableAfter} deliveries in a row failed every retry`, now, o.job.subscriptionId, ctx.disableAfter] };
      }
    }
  }
  for (const id of healthy) yield { kind: 'resetStreak', args: [id] };
}

/**
 * Runs the worker's own bookkeeping (claims, outcomes) without a sync to disk per commit. Losing
 * the last of these in a power cut costs at most a repeated send of a delivery (same webhook id:
 * the receiver de-duplicates), never a lost event: the outbox rows themselves were written with
 * the change, at the database's full durability, which is restored right after (synchronously,
 * so no other statement runs in between).
 */
function withoutSync<T>(sqlite: NonNullable<Db['sqlite']>, fn: () => T): T {
  const before = sqlite.pragma('synchronous', { simple: true }) as number;
  if (before <= 1) return fn();
  sqlite.pragma('synchronous = NORMAL');
  try {
    return fn();
  } finally {
    sqlite.pragma(`synchronous = ${before}`);
  }
}

function originOf(address: string): string {
  return new URL(address).origin;
}

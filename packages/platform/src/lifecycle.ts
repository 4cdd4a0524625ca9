// How a node stops without failing what it already has: the one place that orders the phases of a
// graceful shutdown. The CLI only turns signals into a call here (through Platform.shutdown).
//
//   1. draining: /readyz answers 503 at once, so the load balancer stops choosing this node; the
//      worker stops claiming. Everything sent meanwhile is still served, for `drainDelayMs`.
//   2. the listener closes: no new connections; idle kept-alive ones are closed, busy ones close
//      after their response (it carries `Connection: close`).
//   3. requests in flight and webhook attempts finish, within `timeoutMs`; the worker records their
//      outcomes and releases the claims it still holds, so another worker takes them at once.
//   4. past the timeout the remaining connections are cut and unfinished attempts abandoned (their
//      claims released: they go out again); then a worker's probe server and the storage close.
import type { FastifyInstance } from 'fastify';
import type { ShutdownConfig } from './config.ts';
import type { Readiness } from './services/readiness.ts';
import type { WebhookWorker, WorkerStopReport } from './webhooks/webhook-worker.ts';
import type { WorkerLogger } from './webhooks/worker-logger.ts';

export interface ShutdownParts {
  readiness: Readiness;
  http: FastifyInstance | undefined;
  worker: WebhookWorker | undefined;
  /** A worker's own probe and metrics server: it answers until the worker has stopped. */
  probes: FastifyInstance | undefined;
  closeStorage(): Promise<void>;
  logger: WorkerLogger;
}

export interface ShutdownReport {
  /** Whether everything finished before the timeout (otherwise connections were cut). */
  clean: boolean;
  /** Connections still open at the timeout, cut. */
  connectionsCut: number;
  worker: WorkerStopReport | undefined;
}

/** How often closed-listener idle connections are swept while requests finish. */
const SWEEP_MS = 100;
const PROBES_GRACE_MS = 1000;

export async function gracefulShutdown(parts: ShutdownParts, settings: ShutdownConfig): Promise<ShutdownReport> {
  const { readiness, http, worker, logger } = parts;
  const drainDelayMs = http ? settings.drainDelayMs : 0;
  readiness.startDraining();
  logger.info(
    { phase: 'draining', drain_delay_ms: drainDelayMs, shutdown_timeout_ms: settings.timeoutMs },
    http ? 'shutdown: draining (/readyz answers 503; requests are still served)' : 'shutdown: the webhook worker stops claiming',
  );
  // The worker has the whole time the node has: the drain delay and the timeout after it.
  const workerStopped = worker?.stop({ timeoutMs: drainDelayMs + settings.timeoutMs });
  if (drainDelayMs > 0) await sleep(drainDelayMs);

  let clean = true;
  let connectionsCut = 0;
  if (http) {
    const server = http.server;
    const closed = http.close();
    logger.info({ phase: 'listener-closed' }, 'shutdown: listener closed; waiting for requests in flight');
    // Node closes the idle kept-alive connections when the listener closes, but not those that
    // become idle afterwards (a response sent without `Connection: close` just before draining).
    const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
    try {
      if (!(await settlesWithin(closed, settings.timeoutMs))) {
        clean = false;
        connectionsCut = await openConnections(server);
        logger.warn({ phase: 'timeout', connections: connectionsCut }, 'shutdown: timeout; cutting the connections still open');
        server.closeAllConnections();
        await closed;
      }
    } finally {
      clearInterval(sweep);
    }
  }
  const workerReport = await workerStopped;
  if (workerReport) {
    if (workerReport.abandoned > 0) clean = false;
    logger.info(
      { phase: 'worker-stopped', abandoned: workerReport.abandoned, released: workerReport.released },
      'shutdown: webhook worker stopped; its remaining claims are released',
    );
  }
  if (parts.probes) {
    const probesClosed = parts.probes.close();
    // A scrape in flight gets a moment; a scraper's idle connection does not hold the exit.
    if (!(await settlesWithin(probesClosed, PROBES_GRACE_MS))) parts.probes.server.closeAllConnections();
    await probesClosed;
  }
  await parts.closeStorage();
  logger.info({ phase: 'stopped', clean }, 'shutdown: stopped');
  return { clean, connectionsCut, worker: workerReport };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function openConnections(server: FastifyInstance['server']): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
}

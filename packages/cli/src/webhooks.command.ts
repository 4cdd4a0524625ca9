// storegate worker (the webhook delivery worker, run beside or apart from `serve`), storegate
// webhooks deliveries|redeliver (the delivery log, and sending a delivery again by hand).
import { apiHealthConfig, type ApiHealthOptions, lifecycleOptions, noticeDaysOption } from './api-health-options.ts';
import { Option, type Command } from 'commander';
import { createPlatform, loadConfig, type Config, type WorkerLogger } from '@storegate/platform';
import { withServices } from './database.ts';
import { databasePoolConfig, databasePoolOptions, type DatabasePoolOptions } from './database-options.ts';
import { defaultLogFormat, logFormatOption, prettyLogStream } from './log-format.ts';
import { listenForScrapes, type WorkerMetricsOptions, workerMetricsConfig, workerMetricsOptions } from './metrics-options.ts';
import { stopOnSignals, stopOptions, WORKER_SIGNALS_HELP } from './lifecycle.ts';
import { common } from './options.ts';
import { UsageError, asUsage, print } from './output.ts';
import { followDeliveries } from './webhook-tools.command.ts';

interface WorkerOptions extends DatabasePoolOptions, WorkerMetricsOptions, ApiHealthOptions {
  database?: string;
  storeDomain?: string;
  masterKey?: string;
  previousMasterKey?: string;
  mode?: string;
  logLevel?: string;
  logFormat?: string;
  webhookTimeout?: string;
  webhookRetrySchedule?: string;
  webhookEndpointConcurrency?: string;
  bulkExportRetention?: string;
  shutdownTimeout?: string;
  webhookClaimLease?: string;
}

/** When `shop/redact` is sent after an uninstall: read wherever an app can be uninstalled. */
export function shopRedactDelayOption(): Option {
  return new Option(
    '--shop-redact-delay <wait>',
    'wait after an uninstall before shop/redact is sent, e.g. "48h", "30m" (default 48h)',
  ).env('SHOP_REDACT_DELAY');
}

/** While the master key changes: the key being replaced, still accepted (`serve` and `worker`). */
export function previousMasterKeyOption(): Option {
  return new Option(
    '--previous-master-key <hex>',
    'while changing the master key: the key being replaced, still accepted to open secrets (see storegate keys rotate)',
  ).env('PREVIOUS_MASTER_KEY');
}

/** The webhook options `serve` and `worker` share. */
export function webhookOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--webhook-timeout <ms>', 'deadline of one delivery attempt (default 5000)').env('WEBHOOK_TIMEOUT_MS'))
    .addOption(
      new Option('--webhook-retry-schedule <waits>', 'waits before each retry, e.g. "1s,10s,1m" (default: 19 retries over about 48 h)').env(
        'WEBHOOK_RETRY_SCHEDULE',
      ),
    )
    .addOption(
      new Option(
        '--webhook-endpoint-concurrency <n>',
        'delivery requests in flight to one endpoint (scheme, host, port) at most, 1-64 of the 64 a worker sends at once (default 8)',
      ).env('WEBHOOK_ENDPOINT_CONCURRENCY'),
    )
    .addOption(
      new Option('--bulk-export-retention <duration>', 'how long finished bulk export files are kept, 1h-90d (default 7d)').env(
        'BULK_EXPORT_RETENTION',
      ),
    );
}

/**
 * The worker's log on stderr, never given a secret or a signature (it logs ids and outcomes): JSON
 * lines, or with `pretty` the same records as readable lines through pino-pretty (which reads
 * pino's numeric levels).
 */
export function workerLogger(
  level: Config['logLevel'],
  format: Config['logFormat'] = 'json',
  destination: NodeJS.WritableStream = process.stderr,
  colorize = process.stderr.isTTY === true,
): WorkerLogger {
  const order = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
  const min = level === 'silent' ? Infinity : order.indexOf(level);
  const pretty = format === 'pretty' ? prettyLogStream(destination, colorize) : undefined;
  const line = (lvl: string) => (obj: object, msg: string) => {
    if (order.indexOf(lvl) < min) return;
    if (pretty) pretty.write(`${JSON.stringify({ level: (order.indexOf(lvl) + 1) * 10, time: Date.now(), ...obj, msg })}\n`);
    else destination.write(`${JSON.stringify({ level: lvl, time: Date.now(), ...obj, msg })}\n`);
  };
  return { info: line('info'), warn: line('warn'), error: line('error') };
}

export function registerWebhookCommands(program: Command): void {
  stopOptions(
    workerMetricsOptions(
      databasePoolOptions(
        webhookOptions(
          common(program.command('worker').description('run the webhook delivery worker and bulk exports (serve runs one too)')),
        ),
      ),
    ),
  )
    .addOption(new Option('--store-domain <domain>', 'stores live at {name}.{domain} (default localhost)').env('STORE_DOMAIN'))
    .addOption(new Option('--master-key <hex>', 'key that encrypts secrets at rest (required in production)').env('MASTER_KEY'))
    .addOption(previousMasterKeyOption())
    .addOption(new Option('--mode <mode>', 'development or production').env('NODE_ENV'))
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent').env('LOG_LEVEL'))
    .addOption(logFormatOption())
    .addOption(noticeDaysOption())
    .addOption(lifecycleOptions()[0]!)
    .addOption(lifecycleOptions()[1]!)
    .addHelpText('after', WORKER_SIGNALS_HELP)
    .action(async (opts: WorkerOptions) => {
      const config = asUsage(() =>
        loadConfig({
          database: opts.database,
          ...databasePoolConfig(opts),
          storeDomain: opts.storeDomain,
          // The worker builds no URLs, but the configuration is checked as a whole (production
          // refuses an http scheme), so it reads the same setting as `serve`.
          publicScheme: process.env.PUBLIC_SCHEME,
          masterKey: opts.masterKey,
          previousMasterKey: opts.previousMasterKey,
          mode: opts.mode === 'test' ? undefined : opts.mode,
          logLevel: opts.logLevel,
          logFormat: opts.logFormat ?? defaultLogFormat(opts.mode, process.stderr.isTTY === true),
          webhookTimeout: opts.webhookTimeout,
          webhookRetrySchedule: opts.webhookRetrySchedule,
          webhookEndpointConcurrency: opts.webhookEndpointConcurrency,
          bulkExportRetention: opts.bulkExportRetention,
          shutdownTimeout: opts.shutdownTimeout,
          webhookClaimLease: opts.webhookClaimLease,
          ...apiHealthConfig(opts),
          ...workerMetricsConfig(opts),
        }),
      );
      const logger = workerLogger(config.logLevel, config.logFormat);
      const platform = await createPlatform(config, { http: false, worker: { logger }, probes: config.metricsListener !== undefined });
      const worker = platform.worker!;
      await worker.start();
      const metrics = await listenForScrapes(platform);
      logger.info(
        {
          worker: worker.id,
          database: config.database.dialect,
          claim_lease_ms: config.webhookClaimLeaseMs,
          endpoint_concurrency: config.webhookEndpointConcurrency,
          bulk_export_retention_ms: config.bulkExportRetentionMs,
          ...(metrics ? { metrics } : {}),
        },
        'webhook worker started',
      );
      stopOnSignals(
        async (signal) => {
          logger.info({ signal, worker: worker.id }, 'webhook worker stopping');
          await platform.shutdown();
        },
        (line) => logger.warn({}, line),
      );
    });

  const webhooks = program.command('webhooks').description('webhook deliveries');
  common(webhooks.command('deliveries').description('list webhook deliveries, newest first'))
    .option('--app <client_id>', "only this public app's deliveries")
    .option('--store <name>', "only this store's deliveries")
    .option('--status <status>', 'pending, delivered, dead or cancelled')
    .option('--limit <n>', 'at most this many (default 50)')
    .option('--attempts', 'include every attempt of each delivery', false)
    .option('--follow', 'print each attempt as it is made, one line (--json: one object) per attempt, until Ctrl-C', false)
    .action(
      async (opts: {
        database?: string;
        json: boolean;
        app?: string;
        store?: string;
        status?: string;
        limit?: string;
        attempts: boolean;
        follow: boolean;
      }) => {
        if (opts.follow) {
          if (opts.status !== undefined || opts.limit !== undefined || opts.attempts)
            throw new UsageError('--follow prints new attempts only: it takes --app and --store, not --status, --limit or --attempts');
          return followDeliveries(opts);
        }
        if (opts.limit !== undefined && !/^\d{1,5}$/.test(opts.limit))
          throw new UsageError(`--limit: expected a whole number, got "${opts.limit}"`);
        await withServices(opts.database, async (services) => {
          const list = await services.deliveries.list({
            appClientId: opts.app,
            storeName: opts.store,
            status: opts.status,
            limit: opts.limit === undefined ? undefined : Number(opts.limit),
          });
          const out = opts.attempts
            ? await Promise.all(list.map(async (d) => ({ ...d, attempt_log: await services.deliveries.attempts(Number(d.id)) })))
            : list;
          const human =
            list.length === 0
              ? 'no deliveries'
              : list
                  .map((d) => {
                    const last = `${d.last_status !== null ? `  last ${d.last_status}` : ''}${d.last_error ? `  (${d.last_error})` : ''}`;
                    const what = `${d.id.padStart(6)}  ${d.status.padEnd(9)}  ${d.topic.padEnd(16)}`;
                    return `${what}  ${d.store}  ${d.app}  attempts ${d.attempts}${last}  ${d.webhook_id}`;
                  })
                  .join('\n');
          print(opts.json, out, human);
        });
      },
    );

  common(webhooks.command('redeliver <delivery_id>').description('send a delivery again now (same webhook id)')).action(
    async (id: string, opts: { database?: string; json: boolean }) => {
      await withServices(opts.database, async (services) => {
        const view = await services.deliveries.redeliver(id);
        print(opts.json, view, `delivery ${view.id} (${view.webhook_id}) is queued again`);
      });
    },
  );
}

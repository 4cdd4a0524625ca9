// storegate serve / migrate.
import { apiHealthConfig, apiUsageFlushOption, brownoutRefreshOption, noticeDaysOption } from './api-health-options.ts';
import { Option, type Command } from 'commander';
import {
  createPlatform,
  loadConfig,
  platformBaseUrl,
  seedDemo,
  storeBaseUrl,
  type Config,
  type DemoCredentials,
} from '@storegate/platform';
import { adminConfig } from './database.ts';
import { defaultLogFormat, logFormatOption, prettyLogStream } from './log-format.ts';
import { databasePoolConfig, databasePoolOptions, type DatabasePoolOptions } from './database-options.ts';
import { drainDelayOption, SIGNALS_HELP, stopOnSignals, stopOptions } from './lifecycle.ts';
import { common, passwordScryptNOption } from './options.ts';
import { UsageError, asUsage, print } from './output.ts';
import { secretOverlapOption } from './rotation.command.ts';
import { settleHeapSoon } from './settle-heap.ts';
import { metricsPublic, metricsPublicOption, metricsTokenOption } from './metrics-options.ts';
import { previousMasterKeyOption, shopRedactDelayOption, webhookOptions } from './webhooks.command.ts';

interface ServeOptions extends DatabasePoolOptions {
  port?: string;
  host?: string;
  database?: string;
  storeDomain?: string;
  publicScheme?: string;
  publicPort?: string;
  redis?: string;
  masterKey?: string;
  previousMasterKey?: string;
  mode?: string;
  rateLimit?: string;
  tokenRateLimit?: string;
  tokenStoreRateLimit?: string;
  introspectRateLimit?: string;
  accessTokenTtl?: string;
  logLevel?: string;
  logFormat?: string;
  seedDemo?: boolean;
  webhookTimeout?: string;
  webhookRetrySchedule?: string;
  webhookEndpointConcurrency?: string;
  bulkExportRetention?: string;
  headersTimeout?: string;
  requestTimeout?: string;
  keepAliveTimeout?: string;
  shopRedactDelay?: string;
  deprecation202201?: string;
  sunset202201?: string;
  apiUsageFlush?: string;
  brownoutRefresh?: string;
  apiNoticeDays?: string;
  secretOverlap?: string;
  worker: boolean;
  drainDelay?: string;
  shutdownTimeout?: string;
  webhookClaimLease?: string;
  trustProxy?: string;
  metricsToken?: string;
  metricsPublic?: boolean;
  passwordScryptN?: string;
}

export function registerServeCommands(program: Command): void {
  stopOptions(
    databasePoolOptions(
      secretOverlapOption(
        webhookOptions(common(program.command('serve').description('run the platform (HTTP server and webhook delivery)'))),
      ),
    ),
  )
    .addOption(new Option('--port <port>', 'port to listen on (default 8080)').env('PORT'))
    .addOption(new Option('--host <address>', 'address to listen on (default 127.0.0.1)').env('HOST'))
    .addOption(new Option('--store-domain <domain>', 'stores live at {name}.{domain} (default localhost)').env('STORE_DOMAIN'))
    .addOption(new Option('--public-scheme <scheme>', 'http or https in public URLs').env('PUBLIC_SCHEME'))
    .addOption(new Option('--public-port <port>', 'port shown in public URLs (default: --port)').env('PUBLIC_PORT'))
    .addOption(new Option('--redis <url>', 'Redis for shared state between nodes').env('REDIS_URL'))
    .addOption(new Option('--master-key <hex>', 'key that encrypts secrets at rest (required in production)').env('MASTER_KEY'))
    .addOption(passwordScryptNOption())
    .addOption(previousMasterKeyOption())
    .addOption(new Option('--mode <mode>', 'development or production').env('NODE_ENV'))
    .addOption(new Option('--rate-limit <bucket/per-second>', 'Admin API leaky bucket, or off (default 40/2)').env('RATE_LIMIT'))
    .addOption(
      new Option('--token-rate-limit <bucket/per-second>', 'token grants per client in a store, or off (default 20/1)').env(
        'TOKEN_RATE_LIMIT',
      ),
    )
    .addOption(
      new Option('--token-store-rate-limit <bucket/per-second>', 'token grants per store over all clients, or off (default 100/5)').env(
        'TOKEN_STORE_RATE_LIMIT',
      ),
    )
    .addOption(
      new Option(
        '--introspect-rate-limit <bucket/per-second>',
        'token introspection requests per resource server, or off (default 300/5)',
      ).env('INTROSPECT_RATE_LIMIT'),
    )
    .addOption(new Option('--access-token-ttl <seconds>', 'access token lifetime (default 3600)').env('ACCESS_TOKEN_TTL'))
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent').env('LOG_LEVEL'))
    .addOption(logFormatOption())
    .addOption(
      new Option('--headers-timeout <ms>', 'time a client has to send its request headers (default 10000)').env('HEADERS_TIMEOUT_MS'),
    )
    .addOption(
      new Option('--request-timeout <ms>', 'time a client has to send a whole request, body included (default 30000)').env(
        'REQUEST_TIMEOUT_MS',
      ),
    )
    .addOption(
      new Option('--keep-alive-timeout <ms>', 'idle keep-alive connections are closed after this (default 72000)').env(
        'KEEP_ALIVE_TIMEOUT_MS',
      ),
    )
    .addOption(shopRedactDelayOption())
    .addOption(
      new Option('--deprecation-2022-01 <date>', 'when API version 2022-01 was deprecated, YYYY-MM-DD (default 2025-06-01)').env(
        'DEPRECATION_2022_01',
      ),
    )
    .addOption(
      new Option('--sunset-2022-01 <date>', 'when API version 2022-01 stops answering, YYYY-MM-DD (default 2027-06-01)').env(
        'SUNSET_2022_01',
      ),
    )
    .addOption(
      new Option(
        '--trust-proxy <list>',
        'proxies (IP addresses, CIDR ranges; comma-separated) whose X-Forwarded-For/-Proto are believed',
      ).env('TRUST_PROXY'),
    )
    .addOption(metricsTokenOption())
    .addOption(metricsPublicOption())
    .addOption(apiUsageFlushOption())
    .addOption(brownoutRefreshOption())
    .addOption(noticeDaysOption())
    .option('--seed-demo', 'create the demo store, merchant and app on first start (development only)', false)
    .option('--no-worker', 'serve HTTP only, without the embedded webhook worker (run `storegate worker` processes instead)')
    .addOption(drainDelayOption())
    .addHelpText('after', SIGNALS_HELP)
    .action(async (opts: ServeOptions) => {
      const config = asUsage(() =>
        loadConfig({
          port: opts.port,
          host: opts.host,
          database: opts.database,
          ...databasePoolConfig(opts),
          storeDomain: opts.storeDomain,
          publicScheme: opts.publicScheme,
          publicPort: opts.publicPort,
          redisUrl: opts.redis,
          masterKey: opts.masterKey,
          previousMasterKey: opts.previousMasterKey,
          mode: opts.mode === 'test' ? undefined : opts.mode,
          rateLimit: opts.rateLimit,
          tokenRateLimit: opts.tokenRateLimit,
          tokenStoreRateLimit: opts.tokenStoreRateLimit,
          introspectRateLimit: opts.introspectRateLimit,
          accessTokenTtl: opts.accessTokenTtl,
          logLevel: opts.logLevel,
          logFormat: opts.logFormat ?? defaultLogFormat(opts.mode, process.stdout.isTTY === true),
          webhookTimeout: opts.webhookTimeout,
          webhookRetrySchedule: opts.webhookRetrySchedule,
          webhookEndpointConcurrency: opts.webhookEndpointConcurrency,
          bulkExportRetention: opts.bulkExportRetention,
          headersTimeout: opts.headersTimeout,
          requestTimeout: opts.requestTimeout,
          keepAliveTimeout: opts.keepAliveTimeout,
          shopRedactDelay: opts.shopRedactDelay,
          deprecation202201: opts.deprecation202201,
          sunset202201: opts.sunset202201,
          ...apiHealthConfig(opts),
          secretOverlap: opts.secretOverlap,
          passwordScryptN: opts.passwordScryptN,
          drainDelay: opts.drainDelay,
          shutdownTimeout: opts.shutdownTimeout,
          webhookClaimLease: opts.webhookClaimLease,
          trustProxy: opts.trustProxy,
          metricsToken: opts.metricsToken,
          metricsPublic: metricsPublic(opts.metricsPublic),
        }),
      );
      // The demo accounts have passwords printed on every start: never on a real deployment.
      if (opts.seedDemo && config.mode === 'production')
        throw new UsageError('--seed-demo: not allowed in production mode (the demo accounts have published passwords)');
      const platform = await createPlatform(config, {
        ...(opts.worker ? { worker: {} } : {}),
        ...(config.logFormat === 'pretty' ? { logStream: prettyLogStream() } : {}),
      });
      const app = platform.http;
      const demo = opts.seedDemo ? await seedDemo(platform.services) : undefined;
      await app.listen({ port: config.port, host: config.host });
      await platform.worker?.start();
      settleHeapSoon();
      stopOnSignals(
        async (signal) => {
          app.log.info({ signal }, 'shutting down');
          await platform.shutdown();
        },
        (line) => app.log.warn(line),
      );
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      process.stderr.write(banner({ ...config, publicPort: config.publicPort === 0 ? port : config.publicPort }, demo, opts.worker));
    });

  common(program.command('migrate').description('apply pending database migrations'))
    .option(
      '--pg-partitions <n>',
      'PostgreSQL, first migration of an empty database only: hash-partition every store table by store_id into n partitions ' +
        '(2-1024); recorded in the database, later nodes and migrations keep it',
    )
    .action(async (opts: { database?: string; json: boolean; pgPartitions?: string }) => {
      let partitions: number | undefined;
      if (opts.pgPartitions !== undefined) {
        partitions = /^\d+$/.test(opts.pgPartitions) ? Number(opts.pgPartitions) : Number.NaN;
        if (!(partitions >= 2 && partitions <= 1024))
          throw new UsageError(`--pg-partitions: expected an integer from 2 to 1024, got "${opts.pgPartitions}"`);
      }
      const platform = await createPlatform(adminConfig(opts.database), { http: false, partitions });
      const applied = platform.migrated;
      await platform.close();
      print(opts.json, { applied }, applied.length > 0 ? `applied: ${applied.join(', ')}` : 'database is up to date');
    });
}

function banner(config: Config, demo: DemoCredentials | undefined, worker: boolean): string {
  const lines = [
    '',
    `storegate is running (${config.mode}, ${config.database.dialect === 'sqlite' ? `SQLite ${config.database.path}` : 'PostgreSQL'})`,
    `  platform:        ${platformBaseUrl(config)}   (/healthz, /readyz, /metrics${metricsNote(config)})`,
  ];
  if (!worker) lines.push('  webhooks:        not delivered here (--no-worker): run `storegate worker`');
  if (demo) {
    const base = storeBaseUrl(config, demo.storeName);
    const query = new URLSearchParams({
      client_id: demo.clientId,
      scope: demo.scopes,
      redirect_uri: demo.redirectUri,
      response_type: 'code',
      state: 'try-it-1',
    });
    const authorize = `${base}/admin/oauth/authorize?${query}`;
    lines.push(
      `  store admin:     ${base}/admin`,
      `  merchant login:  ${demo.merchantEmail} / ${demo.merchantPassword}`,
      `  partner login:   ${demo.partnerEmail} / ${demo.partnerPassword}   at ${platformBaseUrl(config)}/partner`,
      `  demo app:        "Demo app"  App URL ${demo.appUrl}  redirect ${demo.redirectUri}`,
      `    client_id      ${demo.clientId}`,
      `    client_secret  ${demo.clientSecret}`,
      `  authorize URL (open in a browser, log in, press "Install app"):`,
      `    ${authorize}`,
      `  token endpoint:  POST ${base}/admin/oauth/token`,
      `  Admin API:       ${base}/openapi/2026-01/products  (header Access-Token)`,
      `  example app:     npm run example  (listens on http://localhost:3000)`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/** How /metrics may be read, for the banner (never the token itself). */
function metricsNote(config: Config): string {
  if (config.metrics.kind === 'token') return ' with the --metrics-token';
  return config.metrics.kind === 'closed' ? ': off, see --metrics-token' : '';
}

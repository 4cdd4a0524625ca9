// `npm run example`: settings from the environment, then listen.
import type { Logger } from '@storegate/app';
import { ExampleConfigError, loadExampleConfig, storeAdminUrl, WEBHOOK_TOPICS, type ExampleConfig } from './example-config.ts';
import { createExampleServer } from './example-server.ts';

function consoleLogger(): Logger {
  const line = (level: string) => (message: string, details?: Record<string, unknown>) =>
    process.stderr.write(
      `[example app] ${level} ${message}${details && Object.keys(details).length > 0 ? ` ${JSON.stringify(details)}` : ''}\n`,
    );
  return { info: line('info'), warn: line('warn'), error: line('error') };
}

let config: ExampleConfig;
try {
  config = loadExampleConfig(process.env);
} catch (error) {
  if (error instanceof ExampleConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

const example = createExampleServer(config, { logger: consoleLogger() });
const listener = example.server.listen(config.port, config.host, () => {
  const address = listener.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const sessions = config.sessionStorage === 'memory' ? 'memory' : `SQLite ${config.sessionStorage.sqlitePath}`;
  process.stderr.write(
    [
      '',
      `storegate example app listening on http://${config.host}:${port}  (App URL ${config.appUrl})`,
      ...(config.managedInstall
        ? [
            `  install:   managed (STOREGATE_MANAGED_INSTALL=1): install from the store admin (e.g. ${storeAdminUrl(config)});`,
            '             the App URL verifies the launch and exchanges its id_token, no OAuth redirect',
          ]
        : [
            `  install:   open the store admin (e.g. ${storeAdminUrl(config)}), log in, Apps → "Demo app" → Install`,
            `             or http://localhost:${port}/auth?shop=demo`,
          ]),
      `  platform:  expected at ${config.apiOrigin}  API version ${config.apiVersion}  (another address: STOREGATE_API_ORIGIN)`,
      `  webhooks:  ${config.webhookAddress}  (${WEBHOOK_TOPICS.join(', ')})`,
      `  sessions:  ${sessions}`,
      '',
    ].join('\n'),
  );
});
listener.on('error', (error: NodeJS.ErrnoException) => {
  process.stderr.write(
    error.code === 'EADDRINUSE'
      ? `Port ${config.port} on ${config.host} is in use. Stop what runs there or set APP_PORT (the platform's App URL must then match: APP_URL).\n`
      : `The example app could not listen: ${error.message}\n`,
  );
  process.exit(1);
});

function shutdown(): void {
  listener.close(() => {
    example.close();
    process.exit(0);
  });
  listener.closeAllConnections();
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);

// storegate dev: the app developer's loop in one command. The platform runs in development mode
// with the demo store (as `serve --seed-demo`), the developer's app is registered or brought up to
// date (App URL, redirect URL, scopes), and its install link and env lines are printed; with
// --app-command the app itself is started with those env lines. Ctrl-C stops both.
import { spawn, type ChildProcess } from 'node:child_process';
import { Option, type Command } from 'commander';
import { passwordScryptNOption } from './options.ts';
import { createPlatform, loadConfig, platformBaseUrl, seedDemo, storeBaseUrl, type Config, type Services } from '@storegate/platform';
import { appEnv, envLines } from './app-env.ts';
import { stopOnSignals } from './lifecycle.ts';
import { examples } from './help.ts';
import { defaultLogFormat, logFormatOption, prettyLogStream } from './log-format.ts';
import { asUsage, CliError, UsageError } from './output.ts';

interface DevOptions {
  appUrl: string;
  redirectUri?: string;
  name: string;
  scopes: string;
  appCommand?: string;
  port?: string;
  host?: string;
  database?: string;
  storeDomain?: string;
  masterKey?: string;
  passwordScryptN?: string;
  logLevel?: string;
  logFormat?: string;
}

const DEV_SCOPES = 'read_products write_products read_orders read_customers';

const DEV_HELP = `
The app is found by its name among the demo partner's apps (partner@demo.test): created the first
time, its App URL, redirect URL and scopes updated on later runs, so its client_id and secret stay
the same from one run to the next. Development mode only (the demo accounts' passwords are printed).
Ctrl-C (SIGINT) or SIGTERM stops your app (SIGTERM) and then the platform, and exits 0.`;

export function registerDevCommand(program: Command): void {
  const dev = program
    .command('dev')
    .description('run the platform with the demo store and your app registered; prints its install link and env lines')
    .requiredOption('--app-url <url>', "your app's App URL, e.g. http://localhost:3000/")
    .option('--redirect-uri <url>', 'its redirect URL (default: the App URL + auth/callback)')
    .option('--name <name>', 'the app name merchants see', 'Dev app')
    .option('--scopes <scopes>', 'scopes the app asks for', DEV_SCOPES)
    .option('--app-command <command>', 'start your app with this shell command, its env lines in the environment')
    .addOption(new Option('--port <port>', 'port the platform listens on (default 8080)').env('PORT'))
    .addOption(new Option('--host <address>', 'address to listen on (default 127.0.0.1)').env('HOST'))
    .addOption(
      new Option('--database <path-or-url>', 'SQLite file path or postgres:// URL (default ./data/storegate.db)').env('DATABASE_URL'),
    )
    .addOption(new Option('--store-domain <domain>', 'stores live at {name}.{domain} (default localhost)').env('STORE_DOMAIN'))
    .addOption(new Option('--master-key <hex>', 'key that encrypts secrets at rest').env('MASTER_KEY'))
    .addOption(passwordScryptNOption())
    .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (default info)').env('LOG_LEVEL'))
    .addOption(logFormatOption())
    .addHelpText('after', DEV_HELP)
    .action(async (opts: DevOptions) => {
      if (process.env.NODE_ENV === 'production')
        throw new CliError('storegate dev runs in development mode only (NODE_ENV=production is set)');
      const redirectUri = opts.redirectUri ?? `${opts.appUrl.endsWith('/') ? opts.appUrl : `${opts.appUrl}/`}auth/callback`;
      // Checked before the database is opened and the demo store seeded (the platform checks the rest).
      for (const [flag, value] of [
        ['--app-url', opts.appUrl],
        ['--redirect-uri', redirectUri],
      ] as const) {
        const problem = urlProblem(value);
        if (problem) throw new UsageError(`${flag} ${problem}, got "${value.slice(0, 100)}"`);
      }
      const config = asUsage(() =>
        loadConfig({
          port: opts.port,
          host: opts.host,
          database: opts.database,
          storeDomain: opts.storeDomain,
          masterKey: opts.masterKey,
          passwordScryptN: opts.passwordScryptN,
          mode: 'development',
          logLevel: opts.logLevel,
          logFormat: opts.logFormat ?? defaultLogFormat('development', process.stdout.isTTY === true),
        }),
      );
      const platform = await createPlatform(config, {
        worker: {},
        ...(config.logFormat === 'pretty' ? { logStream: prettyLogStream() } : {}),
      });
      let child: ChildProcess | undefined;
      try {
        const demo = await seedDemo(platform.services);
        const app = await registerApp(platform.services, demo.partnerEmail, { ...opts, redirectUri });
        await platform.http.listen({ port: config.port, host: config.host });
        await platform.worker?.start();
        const address = platform.http.server.address();
        const port = typeof address === 'object' && address ? address.port : config.port;
        const shown: Config = { ...config, publicPort: config.publicPort === 0 ? port : config.publicPort };
        const env = appEnv({ ...platform.services, config: shown }, app.row, true);
        const base = storeBaseUrl(shown, demo.storeName);
        const install = `${base}/admin/oauth/authorize?${new URLSearchParams({
          client_id: app.row.client_id,
          scope: env.STOREGATE_SCOPES,
          redirect_uri: app.row.redirect_uri,
          response_type: 'code',
          state: 'dev-install',
        })}`;
        process.stdout.write(
          [
            '',
            `storegate dev: platform at ${platformBaseUrl(shown)}, demo store at ${base}/admin`,
            `  merchant login:  ${demo.merchantEmail} / ${demo.merchantPassword}`,
            `  your app:        "${app.row.name}" (${app.action})  App URL ${app.row.app_url}  redirect ${app.row.redirect_uri}`,
            '  install link (open it, log in, press "Install app"):',
            `    ${install}`,
            '  env lines for your app:',
            ...envLines(env)
              .split('\n')
              .map((l) => `    ${l}`),
            opts.appCommand ? `  starting your app: ${opts.appCommand}` : '  Ctrl-C stops the platform',
            '',
            '',
          ].join('\n'),
        );
        if (opts.appCommand) child = startApp(opts.appCommand, env);
      } catch (err) {
        await platform.close();
        throw err;
      }
      stopOnSignals(
        async () => {
          if (child) await stopApp(child);
          await platform.shutdown();
        },
        (line) => process.stderr.write(`${line}\n`),
      );
    });
  examples(
    dev,
    'storegate dev --app-url http://localhost:3000/',
    'storegate dev --app-url http://localhost:3000/ --app-command "npm run example"',
    'storegate dev --app-url http://localhost:4000/ --name "My app" --scopes "read_products read_orders"',
  );
}

function urlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  return value.includes('#') ? 'must not contain "#"' : undefined;
}

async function registerApp(
  services: Services,
  partnerEmail: string,
  opts: { name: string; appUrl: string; redirectUri: string; scopes: string },
): Promise<{ row: NonNullable<Awaited<ReturnType<Services['apps']['findByClientId']>>>; action: string }> {
  const partner = await services.accounts.findPartnerByEmail(partnerEmail);
  if (!partner) throw new Error('the demo partner is missing');
  const existing = (await services.apps.listPartnerApps(partner.id)).find((a) => a.name === opts.name.trim());
  if (!existing) {
    const { app } = await services.apps.createApp({ ...opts, partnerId: partner.id, authorizationIss: true });
    return { row: app, action: 'registered' };
  }
  const { errors, scopes } = services.apps.checkApp(opts);
  if (Object.keys(errors).length > 0)
    throw new UsageError(
      `invalid input: ${Object.entries(errors)
        .map(([f, m]) => `${f} ${m.join(', ')}`)
        .join('; ')}`,
    );
  const same =
    existing.app_url === opts.appUrl &&
    existing.redirect_uri === opts.redirectUri &&
    existing.scopes === [...new Set(scopes)].sort().join(',');
  if (same) return { row: existing, action: 'unchanged' };
  await services.apps.updateUrls(existing.id, opts.appUrl, opts.redirectUri);
  await services.apps.updateProfile(existing.id, { name: existing.name, scopes: opts.scopes });
  return { row: (await services.apps.findByClientId(existing.client_id))!, action: 'updated' };
}

/**
 * The app, in a shell, with the platform's env lines added to this process's environment. It gets
 * a process group of its own, so stopping it reaches whatever the shell started (npm, then node).
 */
function startApp(command: string, env: object): ChildProcess {
  const child = spawn(command, { shell: true, stdio: 'inherit', detached: true, env: { ...process.env, ...env } });
  child.once('exit', (code, signal) => {
    process.stderr.write(`storegate dev: your app exited (${signal ?? `code ${code}`}); the platform keeps running, Ctrl-C stops it\n`);
  });
  return child;
}

/** How long the app gets to stop after SIGTERM before its group is killed. */
const APP_STOP_MS = 5000;

/** SIGTERM to the app's process group; SIGKILL if it is still there after APP_STOP_MS. */
async function stopApp(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // The group is already gone.
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), APP_STOP_MS);
  await exited;
  clearTimeout(timer);
}

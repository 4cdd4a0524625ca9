// storegate stores|apps|private-apps|partners create, storegate seed.
import { Option, type Command } from 'commander';
import { storeBaseUrl, type SeedCounts } from '@storegate/platform';
import { withServices } from './database.ts';
import { shopRedactDelayOption } from './webhooks.command.ts';
import { common } from './options.ts';
import { CliError, UsageError, notFound, print } from './output.ts';
import { generatePassword, generatedPasswordLine, givenPassword } from './password-input.ts';

interface Common {
  database?: string;
  json: boolean;
}

function count(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--${name}: expected a whole number, got "${value}"`);
  return Number(value);
}

export function registerAdminCommands(program: Command): void {
  const stores = program.command('stores').description('manage stores');
  common(
    stores
      .command('create <name>')
      .description("create a store and its owner merchant; generates the owner's password unless --owner-password-stdin"),
  )
    .requiredOption('--owner-email <email>', "the merchant's email (log-in name)")
    .option('--owner-password-stdin', "read the merchant's password from the first line of standard input (at least 8 characters)", false)
    .option('--owner-password <password>', 'the password as a value: shown by ps and kept in shell history (prefer --owner-password-stdin)')
    .option('--currency <code>', 'ISO 4217 currency of the store, e.g. EUR (default USD)')
    .option('--timezone <zone>', 'IANA time zone of the store, e.g. Europe/Paris (default UTC)')
    .action(
      async (
        name: string,
        opts: Common & { ownerEmail: string; ownerPassword?: string; ownerPasswordStdin: boolean; currency?: string; timezone?: string },
      ) => {
        const given = await givenPassword('owner-password', opts.ownerPassword, opts.ownerPasswordStdin);
        const generated = given.password === undefined ? generatePassword() : undefined;
        await withServices(opts.database, async (services) => {
          const store = await services.accounts.createStore({
            name,
            ownerEmail: opts.ownerEmail,
            ownerPassword: given.password ?? generated!,
            currency: opts.currency,
            timezone: opts.timezone,
          });
          const out = {
            store_id: String(store.id),
            store_name: store.name,
            base_url: storeBaseUrl(services.config, store.name),
            ...(generated ? { generated_password: generated } : {}),
          };
          const created = `created store ${out.store_name} (id ${out.store_id}) at ${out.base_url}`;
          print(opts.json, out, generated ? `${created}\n${generatedPasswordLine(opts.ownerEmail, generated)}` : created);
          given.warn();
        });
      },
    );

  const partners = program.command('partners').description('manage partner accounts');
  common(partners.command('create').description('create a partner account; generates its password unless --password-stdin'))
    .requiredOption('--email <email>', 'log-in email')
    .option('--password-stdin', 'read the password from the first line of standard input (at least 8 characters)', false)
    .option('--password <password>', 'the password as a value: shown by ps and kept in shell history (prefer --password-stdin)')
    .action(async (opts: Common & { email: string; password?: string; passwordStdin: boolean }) => {
      const given = await givenPassword('password', opts.password, opts.passwordStdin);
      const generated = given.password === undefined ? generatePassword() : undefined;
      await withServices(opts.database, async (services) => {
        const partner = await services.accounts.createPartner({ email: opts.email, password: given.password ?? generated! });
        const out = { partner_id: String(partner.id), email: partner.email, ...(generated ? { generated_password: generated } : {}) };
        const created = `created partner ${partner.email} (id ${partner.id})`;
        print(opts.json, out, generated ? `${created}\n${generatedPasswordLine(partner.email, generated)}` : created);
        given.warn();
      });
    });

  const apps = program.command('apps').description('manage public (OAuth) apps');
  common(apps.command('create').description('register a public app; prints its client credentials once'))
    .requiredOption('--name <name>', 'app name shown to merchants')
    .requiredOption('--app-url <url>', 'App URL: receives the signed install request')
    .requiredOption('--redirect-uri <url>', 'App Redirect URL (exact; no "#")')
    .option('--scopes <scopes>', 'scopes the app asks for, e.g. "read_products write_orders" (the platform family\'s whole vocabulary)', '')
    .option('--partner <email>', 'partner account that owns the app')
    .option('--privacy-webhook-url <url>', 'where customers/data_request, customers/redact and shop/redact go (none: the app gets none)')
    .option('--no-authorization-iss', 'the redirect with the code carries no iss (for a callback that cannot check it yet)')
    .option('--authorization-iss', 'the redirect with the code carries a signed iss (the default)')
    .option('--managed-install', 'the platform asks the merchant for --scopes at install and opens the app with a launch token')
    .action(
      async (
        opts: Common & {
          name: string;
          appUrl: string;
          redirectUri: string;
          scopes: string;
          partner?: string;
          privacyWebhookUrl?: string;
          authorizationIss?: boolean;
          managedInstall?: boolean;
        },
      ) => {
        if (opts.managedInstall && opts.scopes.trim() === '')
          throw new UsageError('--managed-install needs --scopes: the platform asks the merchant for the scopes the app declares');
        await withServices(opts.database, async (services) => {
          let partnerId: number | null = null;
          if (opts.partner !== undefined) {
            const partner = await services.accounts.findPartnerByEmail(opts.partner);
            if (!partner) throw notFound(`--partner: no partner account with email ${opts.partner}`);
            partnerId = partner.id;
          }
          const { app, clientSecret } = await services.apps.createApp({
            name: opts.name,
            appUrl: opts.appUrl,
            redirectUri: opts.redirectUri,
            scopes: opts.scopes,
            partnerId,
            ...(opts.privacyWebhookUrl !== undefined ? { privacyWebhookUrl: opts.privacyWebhookUrl } : {}),
            authorizationIss: opts.authorizationIss !== false,
            managedInstall: opts.managedInstall === true,
          });
          print(
            opts.json,
            {
              client_id: app.client_id,
              client_secret: clientSecret,
              authorization_iss: app.authorization_iss === 1,
              managed_install: app.managed_install === 1,
            },
            `created app "${app.name}"\nclient_id      ${app.client_id}\nclient_secret  ${clientSecret}${
              app.managed_install === 1 ? '\nmanaged install: merchants install it from the store admin, asked for its scopes there' : ''
            }`,
          );
        });
      },
    );

  common(apps.command('update <client_id>').description("change a public app's settings"))
    .option('--privacy-webhook-url <url>', 'where privacy webhooks go; "" removes it (the app is then sent none)')
    .option('--authorization-iss <on|off>', 'whether the redirect with the code carries a signed iss')
    .option(
      '--managed-install <on|off>',
      'whether the platform asks the merchant for the declared scopes and opens the app with a launch token',
    )
    .option('--ed25519-signatures <on|off>', "whether its webhooks also carry v1a (Ed25519) signatures by the platform's keys")
    .action(async (clientId: string, opts: Common & UpdateOptions) => {
      if (
        opts.privacyWebhookUrl === undefined &&
        opts.authorizationIss === undefined &&
        opts.managedInstall === undefined &&
        opts.ed25519Signatures === undefined
      )
        throw new UsageError(
          'nothing to change: give --privacy-webhook-url, --authorization-iss, --managed-install or --ed25519-signatures',
        );
      const iss = opts.authorizationIss === undefined ? undefined : onOff('authorization-iss', opts.authorizationIss);
      const ed25519 = opts.ed25519Signatures === undefined ? undefined : onOff('ed25519-signatures', opts.ed25519Signatures);
      const managed = opts.managedInstall === undefined ? undefined : onOff('managed-install', opts.managedInstall);
      await withServices(opts.database, async (services) => {
        const app = await services.apps.findByClientId(clientId);
        if (!app) throw notFound(`no app with client_id "${clientId.slice(0, 100)}"`);
        const out: Record<string, unknown> = { client_id: app.client_id };
        const lines: string[] = [];
        // Checked before anything changes: the platform refuses it for an app that declares no scopes.
        if (managed === true && app.scopes === '')
          throw new CliError(
            `--managed-install on: "${app.name}" declares no scopes to ask merchants for (declare them with apps deploy)`,
            'invalid_input',
          );
        if (opts.privacyWebhookUrl !== undefined) {
          const saved = await services.apps.setPrivacyWebhookUrl(app.id, opts.privacyWebhookUrl);
          out.privacy_webhook_url = saved;
          lines.push(
            saved
              ? `"${app.name}" now receives privacy webhooks at ${saved}`
              : `"${app.name}" has no privacy webhook address: it is sent no privacy webhooks`,
          );
        }
        if (managed !== undefined) {
          await services.apps.setManagedInstall(app.id, managed);
          out.managed_install = managed;
          lines.push(
            managed
              ? `"${app.name}": merchants now install it from the store admin, asked for its declared scopes; it opens with a launch token`
              : `"${app.name}": merchants now install it through its own authorization request`,
          );
        }
        if (iss !== undefined) {
          await services.apps.setAuthorizationIss(app.id, iss);
          out.authorization_iss = iss;
          lines.push(`"${app.name}": the redirect with the code ${iss ? 'now carries' : 'no longer carries'} iss`);
        }
        if (ed25519 !== undefined) {
          await services.webhookSignatures.setEd25519(app.id, ed25519);
          out.ed25519_signatures = ed25519;
          lines.push(`"${app.name}": its webhooks ${ed25519 ? 'now also carry' : 'no longer carry'} v1a (Ed25519) signatures`);
        }
        print(opts.json, out, lines.join('\n'));
      });
    });

  common(apps.command('uninstall').description('uninstall an app from a store: revokes its tokens, sends app/uninstalled'))
    .requiredOption('--store <name>', 'store name')
    .requiredOption('--client-id <id>', "the app's client_id")
    .addOption(shopRedactDelayOption())
    .action(async (opts: Common & { store: string; clientId: string; shopRedactDelay?: string }) => {
      await withServices(
        opts.database,
        async (services) => {
          const store = await services.accounts.findStoreByName(opts.store.toLowerCase());
          if (!store) throw notFound(`--store: no store named "${opts.store}"`);
          const app = await services.apps.findByClientId(opts.clientId);
          if (!app) throw notFound(`--client-id: no app with client_id "${opts.clientId.slice(0, 100)}"`);
          await services.apps.uninstall(store.id, app.id);
          print(
            opts.json,
            { store: store.name, client_id: app.client_id, uninstalled: true },
            `uninstalled "${app.name}" from ${store.name}`,
          );
        },
        { config: { shopRedactDelay: opts.shopRedactDelay } },
      );
    });

  const privateApps = program.command('private-apps').description('manage private apps of a store');
  common(privateApps.command('create').description('create a private app; prints its Access-Token and webhook secret once'))
    .requiredOption('--store <name>', 'store name')
    .requiredOption('--name <name>', 'private app name')
    .requiredOption('--scopes <scopes>', 'e.g. "read_products write_products"')
    .action(async (opts: Common & { store: string; name: string; scopes: string }) => {
      await withServices(opts.database, async (services) => {
        const store = await services.accounts.findStoreByName(opts.store.toLowerCase());
        if (!store) throw notFound(`--store: no store named "${opts.store}"`);
        const created = await services.apps.createPrivateApp({ storeId: store.id, name: opts.name, scopes: opts.scopes });
        print(
          opts.json,
          { id: String(created.id), access_token: created.accessToken, webhook_secret: created.webhookSecret },
          `created private app "${opts.name}" (id ${created.id}) for ${store.name} (shown once, keep them safe)\n` +
            `Access-Token    ${created.accessToken}\nwebhook secret  ${created.webhookSecret}`,
        );
      });
    });

  common(program.command('seed').description('fill a store with fake products, orders and customers'))
    .requiredOption('--store <name>', 'store name')
    .addOption(new Option('--products <n>', 'number of products').default('0'))
    .addOption(new Option('--orders <n>', 'number of orders').default('0'))
    .addOption(new Option('--customers <n>', 'number of customers').default('0'))
    .action(async (opts: Common & { store: string; products: string; orders: string; customers: string }) => {
      const counts: SeedCounts = {
        products: count('products', opts.products, 0),
        orders: count('orders', opts.orders, 0),
        customers: count('customers', opts.customers, 0),
      };
      await withServices(opts.database, async (services) => {
        const store = await services.accounts.findStoreByName(opts.store.toLowerCase());
        if (!store) throw notFound(`--store: no store named "${opts.store}"`);
        const total = counts.products + counts.orders + counts.customers;
        // Loaded here, by the one command that draws a progress bar.
        const cliProgress = process.stderr.isTTY && !opts.json ? (await import('cli-progress')).default : undefined;
        const bar = cliProgress
          ? new cliProgress.SingleBar(
              { format: 'seeding {bar} {percentage}% | {value}/{total} rows | {eta}s left', stream: process.stderr },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        bar?.start(total, 0);
        const doneBy: SeedCounts = { products: 0, orders: 0, customers: 0 };
        const started = performance.now();
        await services.seeds.seed(store.id, counts, (kind, done) => {
          doneBy[kind] = done;
          bar?.update(doneBy.products + doneBy.orders + doneBy.customers);
        });
        bar?.stop();
        const seconds = (performance.now() - started) / 1000;
        const rate = Math.round(total / Math.max(seconds, 1e-6));
        print(
          opts.json,
          { store: store.name, ...counts, seconds: Number(seconds.toFixed(3)), rows_per_second: rate },
          `seeded ${store.name}: ${counts.products} products, ${counts.orders} orders, ${counts.customers} customers ` +
            `in ${seconds.toFixed(2)} s (${rate} rows/s)`,
        );
      });
    });
}

interface UpdateOptions {
  privacyWebhookUrl?: string;
  authorizationIss?: string;
  managedInstall?: string;
  ed25519Signatures?: string;
}

function onOff(flag: string, value: string): boolean {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new UsageError(`--${flag}: expected on or off, got "${value.slice(0, 20)}"`);
}

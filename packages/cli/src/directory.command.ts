// storegate stores|partners|apps|private-apps|installations list and show: what exists, as a
// table or JSON. Never a secret (client secrets, tokens and webhook secrets are shown once, when
// they are made).
import type { Command } from 'commander';
import type { Services } from '@storegate/platform';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { UsageError, notFound, print } from './output.ts';
import { details, table } from './table.ts';

interface Common {
  database?: string;
  json: boolean;
}

function group(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

function numericId(what: string, value: string): number {
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new UsageError(`<id>: expected the ${what}'s numeric id, got "${value.slice(0, 40)}"`);
  return Number(value);
}

async function storeId(services: Services, name: string): Promise<number> {
  const store = await services.accounts.findStoreByName(name.toLowerCase());
  if (!store) throw notFound(`--store: no store named "${name.slice(0, 100)}"`);
  return store.id;
}

export function registerDirectoryCommands(program: Command): void {
  const stores = group(program, 'stores', 'manage stores');
  common(stores.command('list').description('list the stores with their owner and how many apps they have')).action(
    async (opts: Common) => {
      await withServices(opts.database, async (services) => {
        const rows = await services.directory.stores();
        print(
          opts.json,
          rows,
          table(
            rows,
            [
              ['NAME', (r) => r.name],
              ['OWNER', (r) => r.owner_email],
              ['CURRENCY', (r) => r.currency],
              ['TIMEZONE', (r) => r.timezone],
              ['APPS', (r) => r.installed_apps],
              ['PRIVATE APPS', (r) => r.private_apps],
              ['CREATED', (r) => r.created_at],
            ],
            'no stores (create one with storegate stores create)',
          ),
        );
      });
    },
  );
  common(stores.command('show <name>').description("one store's details")).action(async (name: string, opts: Common) => {
    await withServices(opts.database, async (services) => {
      const store = await services.directory.store(name);
      print(opts.json, store, details(store));
    });
  });

  const partners = group(program, 'partners', 'manage partner accounts');
  common(partners.command('list').description('list the partner accounts and how many apps each owns')).action(async (opts: Common) => {
    await withServices(opts.database, async (services) => {
      const rows = await services.directory.partners();
      print(
        opts.json,
        rows,
        table(
          rows,
          [
            ['EMAIL', (r) => r.email],
            ['APPS', (r) => r.apps],
            ['CREATED', (r) => r.created_at],
          ],
          'no partner accounts',
        ),
      );
    });
  });
  common(partners.command('show <email>').description("one partner account's details")).action(async (email: string, opts: Common) => {
    await withServices(opts.database, async (services) => {
      const partner = await services.directory.partner(email);
      print(opts.json, partner, details(partner));
    });
  });

  const apps = group(program, 'apps', 'manage public (OAuth) apps');
  common(apps.command('list').description('list the public apps (never their secrets)')).action(async (opts: Common) => {
    await withServices(opts.database, async (services) => {
      const rows = await services.directory.apps();
      print(
        opts.json,
        rows,
        table(
          rows,
          [
            ['CLIENT_ID', (r) => r.client_id],
            ['NAME', (r) => r.name],
            ['PARTNER', (r) => r.partner_email],
            ['INSTALLS', (r) => r.installations],
            ['MANAGED', (r) => (r.managed_install ? 'yes' : 'no')],
            ['SCOPES', (r) => r.scopes],
          ],
          'no apps (register one with storegate apps create)',
        ),
      );
    });
  });
  common(apps.command('show <client_id>').description("one app's settings (never its secret)")).action(
    async (clientId: string, opts: Common) => {
      await withServices(opts.database, async (services) => {
        const app = await services.directory.app(clientId);
        print(opts.json, app, details(app));
      });
    },
  );

  const privateApps = group(program, 'private-apps', 'manage private apps of a store');
  common(privateApps.command('list').description('list private apps, active and revoked (never their tokens)'))
    .option('--store <name>', "only this store's private apps")
    .action(async (opts: Common & { store?: string }) => {
      await withServices(opts.database, async (services) => {
        const rows = await services.directory.privateApps(opts.store === undefined ? undefined : await storeId(services, opts.store));
        print(
          opts.json,
          rows,
          table(
            rows,
            [
              ['ID', (r) => r.id],
              ['STORE', (r) => r.store],
              ['NAME', (r) => r.name],
              ['STATUS', (r) => r.status],
              ['SCOPES', (r) => r.scopes],
            ],
            'no private apps',
          ),
        );
      });
    });
  common(privateApps.command('show <id>').description("one private app's details (never its token)"))
    .requiredOption('--store <name>', 'store name')
    .action(async (id: string, opts: Common & { store: string }) => {
      const number = numericId('private app', id);
      await withServices(opts.database, async (services) => {
        const app = await services.directory.privateApp(await storeId(services, opts.store), number);
        print(opts.json, app, details(app));
      });
    });

  const installations = group(program, 'installations', 'apps installed in stores');
  common(installations.command('list').description('list installations, newest first, current and uninstalled'))
    .option('--store <name>', "only this store's")
    .option('--app <client_id>', "only this app's")
    .action(async (opts: Common & { store?: string; app?: string }) => {
      await withServices(opts.database, async (services) => {
        const filter: { storeId?: number; appId?: number } = {};
        if (opts.store !== undefined) filter.storeId = await storeId(services, opts.store);
        if (opts.app !== undefined) {
          const app = await services.apps.findByClientId(opts.app);
          if (!app) throw notFound(`--app: no app with client_id "${opts.app.slice(0, 100)}"`);
          filter.appId = app.id;
        }
        const rows = await services.directory.installations(filter);
        print(
          opts.json,
          rows,
          table(
            rows,
            [
              ['ID', (r) => r.id],
              ['STORE', (r) => r.store],
              ['APP', (r) => r.app],
              ['CLIENT_ID', (r) => r.client_id],
              ['STATUS', (r) => r.status],
              ['SCOPES', (r) => r.scopes],
            ],
            'no installations',
          ),
        );
      });
    });
  common(installations.command('show <id>').description("one installation's details")).action(async (id: string, opts: Common) => {
    const number = numericId('installation', id);
    await withServices(opts.database, async (services) => {
      const installation = await services.directory.installation(number);
      print(opts.json, installation, details(installation));
    });
  });
}

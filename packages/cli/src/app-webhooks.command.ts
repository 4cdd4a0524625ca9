// storegate apps webhooks list|add|remove: an app's app-level webhook subscriptions, copied into
// every store that installs the app (now and later). The same list `apps deploy` writes from the
// configuration file's [[webhooks.subscriptions]], the partner dashboard's Webhooks tab and the
// partner API change: the next deploy makes it the file's list again.
import type { Command } from 'commander';
import type { Services } from '@storegate/platform';
import { addedLines, appSubscriptionJson, removedLine } from './app-webhooks-output.ts';
import { withServices } from './database.ts';
import { examples } from './help.ts';
import { common } from './options.ts';
import { notFound, print, UsageError } from './output.ts';
import { table } from './table.ts';

interface Common {
  database?: string;
  json: boolean;
}

function idArgument(value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value))
    throw new UsageError(`<id>: expected a subscription id (a positive integer), got "${value.slice(0, 40)}"`);
  return Number(value);
}

async function appOf(services: Services, clientId: string) {
  const app = await services.apps.findByClientId(clientId);
  if (!app) throw notFound(`no app with client_id "${clientId.slice(0, 100)}"`);
  return app;
}

export function registerAppWebhookCommands(program: Command): void {
  const apps = program.commands.find((c) => c.name() === 'apps');
  if (!apps) throw new Error('the "apps" command must be registered first');
  const webhooks = apps
    .command('webhooks')
    .description("an app's app-level webhook subscriptions: copied into every store that installs the app");
  examples(
    webhooks,
    'storegate apps webhooks list <client_id>',
    'storegate apps webhooks add <client_id> --topic products/create --address https://app.example/webhooks',
  );

  const list = common(
    webhooks.command('list <client_id>').description("list the app's app-level subscriptions and how many stores hold a copy"),
  ).action(async (clientId: string, opts: Common) => {
    await withServices(opts.database, async (services) => {
      const rows = await services.appWebhooks.list((await appOf(services, clientId)).id);
      print(
        opts.json,
        rows.map((r) => ({ ...appSubscriptionJson(r), stores: r.stores })),
        table(
          rows,
          [
            ['ID', (r) => String(r.id)],
            ['TOPIC', (r) => r.topic],
            ['ADDRESS', (r) => r.address],
            ['STORES', (r) => String(r.stores)],
          ],
          'no app-level webhook subscriptions (add one with storegate apps webhooks add)',
        ),
      );
    });
  });
  examples(list, 'storegate apps webhooks list <client_id>', 'storegate apps webhooks list <client_id> --json');

  const add = common(webhooks.command('add <client_id>').description('add one and copy it into every store the app is installed in'))
    .requiredOption('--topic <topic>', 'the topic, e.g. products/create (privacy topics go to the privacy webhook address)')
    .requiredOption('--address <url>', 'where the webhooks are sent')
    .action(async (clientId: string, opts: Common & { topic: string; address: string }) => {
      await withServices(opts.database, async (services) => {
        const added = await services.appWebhooks.add((await appOf(services, clientId)).id, { topic: opts.topic, address: opts.address });
        print(opts.json, { ...appSubscriptionJson(added), stores: added.stores, skipped: added.skipped }, addedLines(added).join('\n'));
      });
    });
  examples(
    add,
    'storegate apps webhooks add <client_id> --topic products/create --address https://app.example/webhooks',
    'storegate apps webhooks add <client_id> --topic app/uninstalled --address https://app.example/uninstalled --json',
  );

  const remove = common(webhooks.command('remove <client_id> <id>').description('remove one and its copy in every store')).action(
    async (clientId: string, rawId: string, opts: Common) => {
      const id = idArgument(rawId);
      await withServices(opts.database, async (services) => {
        const removed = await services.appWebhooks.remove((await appOf(services, clientId)).id, id);
        print(opts.json, { ...appSubscriptionJson(removed), stores: removed.stores }, removedLine(removed));
      });
    },
  );
  examples(remove, 'storegate apps webhooks remove <client_id> 3', 'storegate apps webhooks remove <client_id> 3 --json');
}

// storegate apps webhooks list|add|update|remove: an app's app-level webhook subscriptions, copied
// into every store that installs the app (now and later), with the filter and include_fields every
// copy sends by. The same list `apps deploy` writes from the
// configuration file's [[webhooks.subscriptions]], the partner dashboard's Webhooks tab and the
// partner API change: the next deploy makes it the file's list again.
import type { Command } from 'commander';
import type { Services } from '@storegate/platform';
import { addedLines, appSubscriptionJson, changedJson, changedLine, fieldsText, filterText, removedLine } from './app-webhooks-output.ts';
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

/** `--include-fields a,b`: the names, blanks dropped; an empty value means none (the whole object). */
function includeFieldsOption(value: string): string[] | null {
  const fields = value
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  return fields.length === 0 ? null : fields;
}

/** `--filter ''` means none (every change of the topic). */
const filterOption = (value: string): string | null => (value.trim() === '' ? null : value);

interface ShapeOptions {
  filter?: string | null;
  includeFields?: string[] | null;
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
    'storegate apps webhooks update <client_id> 3 --filter "status:active AND price:>=10" --include-fields id,title,price',
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
            ['FILTER', filterText],
            ['FIELDS', fieldsText],
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
    .option('--filter <query>', 'only changes whose object matches are sent, e.g. "status:active AND price:>=10"', filterOption)
    .option('--include-fields <fields>', 'comma-separated top-level fields each webhook holds, e.g. id,title,price', includeFieldsOption)
    .action(async (clientId: string, opts: Common & ShapeOptions & { topic: string; address: string }) => {
      await withServices(opts.database, async (services) => {
        const added = await services.appWebhooks.add((await appOf(services, clientId)).id, {
          topic: opts.topic,
          address: opts.address,
          filter: opts.filter,
          includeFields: opts.includeFields,
        });
        print(opts.json, { ...appSubscriptionJson(added), stores: added.stores, skipped: added.skipped }, addedLines(added).join('\n'));
      });
    });
  examples(
    add,
    'storegate apps webhooks add <client_id> --topic products/create --address https://app.example/webhooks',
    'storegate apps webhooks add <client_id> --topic products/update --address https://app.example/webhooks ' +
      '--filter "status:active AND price:>=10" --include-fields id,title,price',
    'storegate apps webhooks add <client_id> --topic app/uninstalled --address https://app.example/uninstalled --json',
  );

  const update = common(
    webhooks
      .command('update <client_id> <id>')
      .description("change one's filter and/or include_fields, and its copy in every store (topic and address stay)"),
  )
    .option('--filter <query>', 'the new filter; "" removes it (every change of the topic)', filterOption)
    .option('--include-fields <fields>', 'the new comma-separated fields; "" removes them (the whole object)', includeFieldsOption)
    .action(async (clientId: string, rawId: string, opts: Common & ShapeOptions) => {
      const id = idArgument(rawId);
      if (opts.filter === undefined && opts.includeFields === undefined)
        throw new UsageError('nothing to change: give --filter and/or --include-fields');
      await withServices(opts.database, async (services) => {
        const done = await services.appWebhooks.update((await appOf(services, clientId)).id, id, {
          filter: opts.filter,
          includeFields: opts.includeFields,
        });
        print(opts.json, changedJson(done), changedLine(done));
      });
    });
  examples(
    update,
    'storegate apps webhooks update <client_id> 3 --filter "status:active AND price:>=10"',
    'storegate apps webhooks update <client_id> 3 --include-fields id,title --json',
    'storegate apps webhooks update <client_id> 3 --filter "" --include-fields ""',
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

// storegate resource-servers create|list|delete: the credentials of the operator's own resource
// servers, the only clients of token introspection (POST {base_url}/admin/oauth/introspect). Made
// only here, by the operator: the secret is printed once, at creation, and kept only as a hash.
import type { Command } from 'commander';
import { withServices } from './database.ts';
import { examples } from './help.ts';
import { common } from './options.ts';
import { UsageError, print } from './output.ts';
import { table } from './table.ts';

interface Common {
  database?: string;
  json: boolean;
}

/** What `create` makes: a client_id is `rs_` and 32 hex digits; anything else names none. */
function clientIdArgument(value: string): string {
  if (!/^rs_[0-9a-f]{32}$/.test(value))
    throw new UsageError(`<client_id>: expected a resource server's client_id (rs_ and 32 hex digits), got "${value.slice(0, 40)}"`);
  return value;
}

export function registerResourceServerCommands(program: Command): void {
  const servers = program
    .command('resource-servers')
    .description("manage the credentials of the operator's resource servers (token introspection clients)");
  examples(servers, 'storegate resource-servers create --name "API gateway"', 'storegate resource-servers list');

  const create = common(servers.command('create').description('create a credential; prints its client_id and secret once'))
    .requiredOption('--name <name>', 'what the resource server is, for the operator (1 to 100 characters)')
    .action(async (opts: Common & { name: string }) => {
      await withServices(opts.database, async (services) => {
        const created = await services.resourceServers.create({ name: opts.name });
        print(
          opts.json,
          created,
          `created resource server "${created.name}"\nclient_id      ${created.client_id}\nclient_secret  ${created.client_secret}\n` +
            'The secret is shown only now. It authenticates POST {store base URL}/admin/oauth/introspect (HTTP Basic).',
        );
      });
    });
  examples(create, 'storegate resource-servers create --name "API gateway"', 'storegate resource-servers create --name reports --json');

  const list = common(servers.command('list').description('list the resource servers (never their secrets)')).action(
    async (opts: Common) => {
      await withServices(opts.database, async (services) => {
        const rows = await services.resourceServers.list();
        print(
          opts.json,
          rows,
          table(
            rows,
            [
              ['CLIENT_ID', (r) => r.client_id],
              ['NAME', (r) => r.name],
              ['CREATED', (r) => r.created_at],
            ],
            'no resource servers (create one with storegate resource-servers create)',
          ),
        );
      });
    },
  );
  examples(list, 'storegate resource-servers list', 'storegate resource-servers list --json');

  const remove = common(
    servers.command('delete <client_id>').description('delete a credential: its next introspection request is refused'),
  ).action(async (clientId: string, opts: Common) => {
    const id = clientIdArgument(clientId);
    await withServices(opts.database, async (services) => {
      await services.resourceServers.delete(id);
      print(opts.json, { client_id: id, deleted: true }, `deleted resource server ${id}`);
    });
  });
  examples(remove, 'storegate resource-servers delete <client_id>');
}

// storegate apps api-health <client_id>, storegate api-health, storegate api-versions list and
// storegate api-versions brownout add|list|remove: which apps still call a deprecated Admin API
// version (per app, or every caller), each version's lifecycle, and the brown-outs the operator
// schedules before a sunset. The server and these commands read the same sunset settings
// (--deprecation-2022-01 / --sunset-2022-01, or their environment variables).
import type { Command } from 'commander';
import { CURRENT_VERSION, LATEST_VERSION, SUPPORTED_VERSIONS, daysLeft, type VersionUsage } from '@storegate/platform';
import { withServices } from './database.ts';
import { examples } from './help.ts';
import { common } from './options.ts';
import { UsageError, notFound, print } from './output.ts';
import { table } from './table.ts';

interface Common {
  database?: string;
  json: boolean;
}

/** The version lifecycle as the server reads it from its environment. */
const lifecycleConfig = () => ({
  config: { deprecation202201: process.env.DEPRECATION_2022_01, sunset202201: process.env.SUNSET_2022_01 },
});

/** `2027-05-01` (midnight UTC) or `2027-05-01T09:00:00Z`: a date the operator types. */
function dateOption(name: string, value: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.exec(value);
  const ms = m ? Date.parse(m[2] ? value : `${value}T00:00:00Z`) : Number.NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== m[1])
    throw new UsageError(`${name}: expected a date such as 2027-05-01 or 2027-05-01T09:00:00Z, got "${value.slice(0, 40)}"`);
  return ms;
}

function idArgument(value: string): number {
  if (!/^[1-9]\d{0,15}$/.test(value))
    throw new UsageError(`<id>: expected a brown-out id (a positive integer), got "${value.slice(0, 40)}"`);
  return Number(value);
}

function usageText(versions: readonly VersionUsage[], empty: string): string {
  if (versions.length === 0) return empty;
  return versions
    .map(
      (v) =>
        `${v.summary}\n${v.calls} call(s), the latest at ${v.last_seen_at}${v.notified_at ? `; notice sent ${v.notified_at}` : ''}\n` +
        table(
          v.routes,
          [
            ['ROUTE', (r) => r.route],
            ['CALLS', (r) => String(r.calls)],
            ['FIRST_SEEN', (r) => r.first_seen_at],
            ['LAST_SEEN', (r) => r.last_seen_at],
          ],
          '',
        ),
    )
    .join('\n\n');
}

export function registerApiHealthCommands(program: Command): void {
  const apps = program.commands.find((c) => c.name() === 'apps');
  if (!apps) throw new Error('the "apps" command must be registered first');
  const appHealth = common(
    apps.command('api-health <client_id>').description("an app's calls to deprecated Admin API versions, with each version's sunset"),
  ).action(async (clientId: string, opts: Common) => {
    await withServices(
      opts.database,
      async (services) => {
        const app = await services.apps.findByClientId(clientId);
        if (!app) throw notFound(`no app with client_id "${clientId.slice(0, 100)}"`);
        const versions = await services.apiHealth.forCaller('app', app.id);
        print(
          opts.json,
          { client_id: app.client_id, name: app.name, versions },
          usageText(versions, `"${app.name}" calls no deprecated API version`),
        );
      },
      lifecycleConfig(),
    );
  });
  examples(appHealth, 'storegate apps api-health <client_id>', 'storegate apps api-health <client_id> --json');

  const everyone = common(
    program.command('api-health').description('every app and private app still calling a deprecated Admin API version'),
  ).action(async (opts: Common) => {
    await withServices(
      opts.database,
      async (services) => {
        const callers = await services.apiHealth.everyCaller();
        const rows = callers.flatMap((c) =>
          c.versions.map((v) => ({ caller: `${c.caller_kind === 'app' ? 'app' : 'private-app'} ${c.caller_id}`, ...v })),
        );
        print(
          opts.json,
          callers,
          table(
            rows,
            [
              ['CALLER', (r) => r.caller],
              ['VERSION', (r) => r.version],
              ['CALLS', (r) => String(r.calls)],
              ['LAST_SEEN', (r) => r.last_seen_at],
              ['SUNSET', (r) => r.sunset_at?.slice(0, 10) ?? '-'],
              ['DAYS_LEFT', (r) => (r.days_left === null ? '-' : String(r.days_left))],
              ['NOTIFIED', (r) => r.notified_at ?? '-'],
            ],
            'no app calls a deprecated API version',
          ),
        );
      },
      lifecycleConfig(),
    );
  });
  examples(everyone, 'storegate api-health', 'storegate api-health --json');

  const versions = program.command('api-versions').description('Admin API versions: their lifecycle and brown-outs');
  examples(
    versions,
    'storegate api-versions list',
    'storegate api-versions brownout add 2022-01 --start 2027-05-01T09:00:00Z --end 2027-05-01T10:00:00Z',
  );

  const list = common(
    versions.command('list').description('every supported version, which is current, and the sunset of deprecated ones'),
  ).action(async (opts: Common) => {
    await withServices(
      opts.database,
      async (services) => {
        const brownouts = await services.brownouts.list();
        const now = services.clock();
        const rows = SUPPORTED_VERSIONS.map((version) => {
          const lifecycle = services.config.apiDeprecations[version];
          return {
            version,
            status: lifecycle
              ? 'deprecated'
              : version === CURRENT_VERSION
                ? 'current'
                : version === LATEST_VERSION
                  ? 'latest'
                  : 'supported',
            deprecated_at: lifecycle ? new Date(lifecycle.deprecatedAt).toISOString() : null,
            sunset_at: lifecycle ? new Date(lifecycle.sunsetAt).toISOString() : null,
            days_left: lifecycle ? daysLeft(lifecycle.sunsetAt, now) : null,
            brownouts: brownouts.filter((b) => b.version === version).length,
          };
        });
        print(
          opts.json,
          rows,
          table(
            rows,
            [
              ['VERSION', (r) => r.version],
              ['STATUS', (r) => r.status],
              ['SUNSET', (r) => r.sunset_at?.slice(0, 10) ?? '-'],
              ['DAYS_LEFT', (r) => (r.days_left === null ? '-' : String(r.days_left))],
              ['BROWNOUTS', (r) => String(r.brownouts)],
            ],
            '',
          ),
        );
      },
      lifecycleConfig(),
    );
  });
  examples(list, 'storegate api-versions list', 'storegate api-versions list --json');

  const brownout = versions.command('brownout').description('windows during which a deprecated version answers 410 Gone');
  examples(brownout, 'storegate api-versions brownout list');

  const add = common(brownout.command('add <version>').description('schedule a window; every node applies it within its refresh interval'))
    .requiredOption('--start <date>', 'when the window starts, e.g. 2027-05-01T09:00:00Z (UTC)')
    .requiredOption('--end <date>', 'when it ends (after the start)')
    .action(async (version: string, opts: Common & { start: string; end: string }) => {
      const startsAt = dateOption('--start', opts.start);
      const endsAt = dateOption('--end', opts.end);
      await withServices(
        opts.database,
        async (services) => {
          const w = await services.brownouts.add({ version, startsAt, endsAt });
          print(
            opts.json,
            w,
            `scheduled brown-out ${w.id}: version ${w.version} answers 410 from ${w.starts_at} to ${w.ends_at} ` +
              `(sunset ${w.sunset_at ?? '-'}, move to ${w.use_version})`,
          );
        },
        lifecycleConfig(),
      );
    });
  examples(add, 'storegate api-versions brownout add 2022-01 --start 2027-05-01T09:00:00Z --end 2027-05-01T10:00:00Z');

  const show = common(brownout.command('list').description('every scheduled brown-out window')).action(async (opts: Common) => {
    await withServices(
      opts.database,
      async (services) => {
        const rows = await services.brownouts.list();
        print(
          opts.json,
          rows,
          table(
            rows,
            [
              ['ID', (r) => String(r.id)],
              ['VERSION', (r) => r.version],
              ['STARTS', (r) => r.starts_at],
              ['ENDS', (r) => r.ends_at],
              ['SUNSET', (r) => r.sunset_at ?? '-'],
            ],
            'no brown-outs scheduled',
          ),
        );
      },
      lifecycleConfig(),
    );
  });
  examples(show, 'storegate api-versions brownout list', 'storegate api-versions brownout list --json');

  const remove = common(
    brownout.command('remove <id>').description('remove a window; every node stops applying it within its refresh interval'),
  ).action(async (id: string, opts: Common) => {
    const n = idArgument(id);
    await withServices(opts.database, async (services) => {
      await services.brownouts.remove(n);
      print(opts.json, { id: n, removed: true }, `removed brown-out ${n}`);
    });
  });
  examples(remove, 'storegate api-versions brownout remove 1');
}

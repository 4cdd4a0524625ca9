// storegate keys webhook-signing list | rotate | finish: the platform's Ed25519 keys that sign
// webhooks with `v1a` for the apps that asked. A rotation publishes the new key and signs with it
// at once, beside the replaced key, which keeps signing and stays in the JWKS for the overlap
// (7 days unless --overlap says otherwise); finish ends the overlap early.
import { Option, type Command } from 'commander';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { UsageError, print } from './output.ts';
import { table } from './table.ts';

interface Options {
  database?: string;
  json: boolean;
  overlap?: string;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const MAX_OVERLAP_MS = 90 * 86_400_000;

/** `--overlap`: `0` (the replaced key stops at once), or a duration such as 12h or 7d, up to 90 days. */
export function parseOverlap(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,9})(s|m|h|d)$/.exec(value.trim());
  const ms = value.trim() === '0' ? 0 : m ? Number(m[1]) * UNITS[m[2]!]! : undefined;
  if (ms === undefined) throw new UsageError(`--overlap: expected 0 or a duration such as 12h or 7d, got "${value.slice(0, 40)}"`);
  if (ms > MAX_OVERLAP_MS) throw new UsageError(`--overlap: at most 90 days, got "${value.slice(0, 40)}"`);
  return ms;
}

function subcommand(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  if (!found) throw new Error(`the "${name}" command must be registered first`);
  return found;
}

export function registerWebhookSigningCommands(program: Command): void {
  const group = subcommand(program, 'keys')
    .command('webhook-signing')
    .description("the platform's Ed25519 keys that sign webhooks (v1a) for apps that asked; published at /.well-known/jwks.json");

  common(group.command('list').description('the signing keys and their state (active, retiring until a time, retired)')).action(
    async (opts: Options) => {
      await withServices(opts.database, async (services) => {
        const keys = await services.signingKeys.list();
        print(
          opts.json,
          { keys },
          table(
            keys,
            [
              ['KID', (k) => k.kid],
              ['STATE', (k) => k.state],
              ['CREATED', (k) => k.created_at],
              ['RETIRES', (k) => k.retires_at],
            ],
            'no webhook signing key yet: the first is made when an app that asked for v1a signatures gets a webhook, or the JWKS is read',
          ),
        );
      });
    },
  );

  common(group.command('rotate').description('make a new signing key; the replaced key keeps signing beside it for the overlap'))
    .addOption(
      new Option('--overlap <duration>', 'how long the replaced key keeps signing and stays published, 0 or up to 90d (default 7d)'),
    )
    .action(async (opts: Options) => {
      const overlapMs = parseOverlap(opts.overlap);
      await withServices(opts.database, async (services) => {
        const result = await services.signingKeys.rotate(overlapMs === undefined ? {} : { overlapMs });
        print(
          opts.json,
          { kid: result.kid, replaced: result.replaced, retires_at: result.retiresAt },
          `new webhook signing key ${result.kid} is published and signs now; ` +
            `${result.replaced} signs beside it until ${result.retiresAt}\n` +
            'nodes pick the new key up within a minute; `storegate keys webhook-signing finish` ends the overlap early',
        );
      });
    });

  common(group.command('finish').description('end the overlap now: replaced keys stop signing and leave the JWKS')).action(
    async (opts: Options) => {
      await withServices(opts.database, async (services) => {
        const { retired } = await services.signingKeys.finish();
        print(
          opts.json,
          { retired },
          retired.length === 0
            ? 'no replaced key was signing: nothing to finish'
            : `retired ${retired.join(', ')}: only the active key signs and is published from now on (within a minute on every node)`,
        );
      });
    },
  );
}

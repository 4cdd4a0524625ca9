// storegate apps rotate-secret, storegate private-apps rotate-secret: start a rotation of a signing
// secret (the new secret is printed once) or finish the one in progress (--finish). While it lasts
// the replaced secret keeps working and signing, so the app can deploy the new one first.
import { Option, type Command } from 'commander';
import { NotFoundError } from '@storegate/platform';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { UsageError, notFound, print } from './output.ts';

interface RotateOptions {
  database?: string;
  json: boolean;
  finish: boolean;
  secretOverlap?: string;
}

/** `--secret-overlap`, shared by `serve` and the rotate commands (the overlap starts with the rotation). */
export function secretOverlapOption(cmd: Command): Command {
  return cmd.addOption(
    new Option(
      '--secret-overlap <duration>',
      'how long a rotated-out secret keeps working unless the rotation is finished first, e.g. 30m, 24h, 7d (default 24h)',
    ).env('SECRET_OVERLAP'),
  );
}

function subcommand(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  if (!found) throw new Error(`the "${name}" command must be registered first`);
  return found;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function registerRotationCommands(program: Command): void {
  secretOverlapOption(
    common(
      subcommand(program, 'apps')
        .command('rotate-secret <client_id>')
        .description("rotate an app's client secret (prints the new one once), or --finish the rotation in progress"),
    ),
  )
    .option('--finish', 'finish the rotation in progress: only the new secret works and signs from now on', false)
    .action(async (clientId: string, opts: RotateOptions) => {
      await withServices(
        opts.database,
        async (services) => {
          const app = await services.apps.findByClientId(clientId);
          if (!app) throw notFound(`no app with client_id "${clientId.slice(0, 100)}"`);
          if (opts.finish) {
            await services.rotations.finishClientSecretRotation(app.id);
            print(
              opts.json,
              { client_id: app.client_id, rotation: 'finished' },
              `finished the client secret rotation of "${app.name}": only the new secret works and signs from now on`,
            );
            return;
          }
          const rotated = await services.rotations.rotateClientSecret(app.id);
          print(
            opts.json,
            { client_id: app.client_id, client_secret: rotated.secret, previous_secret_expires_at: iso(rotated.overlapEndsAt) },
            `rotated the client secret of "${app.name}" (shown once, keep it safe)\nclient_secret  ${rotated.secret}\n` +
              'The previous secret keeps working and signing until you run this command with --finish, ' +
              `at the latest until ${iso(rotated.overlapEndsAt)}.`,
          );
        },
        { config: { secretOverlap: opts.secretOverlap } },
      );
    });

  secretOverlapOption(
    common(
      subcommand(program, 'private-apps')
        .command('rotate-secret <id>')
        .description("rotate a private app's webhook secret (prints the new one once), or --finish the rotation in progress"),
    ),
  )
    .requiredOption('--store <name>', 'store name')
    .option('--finish', 'finish the rotation in progress: only the new secret signs from now on', false)
    .action(async (id: string, opts: RotateOptions & { store: string }) => {
      if (!/^[1-9]\d{0,14}$/.test(id)) throw new UsageError(`<id>: expected the private app's numeric id, got "${id.slice(0, 40)}"`);
      await withServices(
        opts.database,
        async (services) => {
          const store = await services.accounts.findStoreByName(opts.store.toLowerCase());
          if (!store) throw notFound(`--store: no store named "${opts.store}"`);
          try {
            if (opts.finish) {
              await services.rotations.finishPrivateWebhookSecretRotation(store.id, Number(id));
              print(
                opts.json,
                { id, store: store.name, rotation: 'finished' },
                `finished the webhook secret rotation of private app ${id} in ${store.name}: only the new secret signs from now on`,
              );
              return;
            }
            const rotated = await services.rotations.rotatePrivateWebhookSecret(store.id, Number(id));
            print(
              opts.json,
              { id, store: store.name, webhook_secret: rotated.secret, previous_secret_expires_at: iso(rotated.overlapEndsAt) },
              `rotated the webhook secret of private app "${rotated.name}" (shown once, keep it safe)\n` +
                `webhook secret  ${rotated.secret}\n` +
                'Webhooks are also signed with the previous secret until you run this command with --finish, ' +
                `at the latest until ${iso(rotated.overlapEndsAt)}.`,
            );
          } catch (err) {
            if (err instanceof NotFoundError) throw notFound(`no active private app with id ${id} in store ${store.name}`);
            throw err;
          }
        },
        { config: { secretOverlap: opts.secretOverlap } },
      );
    });
}

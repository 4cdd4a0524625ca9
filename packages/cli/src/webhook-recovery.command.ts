// storegate webhooks enable|replay: bring a subscription back after its endpoint failed. enable
// makes a disabled subscription active again in place (same id, history and deliveries); replay
// queues its deliveries since a time again, each with its original webhook id. The operator names
// the subscription by its id alone, in whichever store it is.
import { Option, type Command } from 'commander';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { UsageError, print } from './output.ts';

function subcommand(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  if (!found) throw new Error(`the "${name}" command must be registered first`);
  return found;
}

/** A subscription id from the command line, refused before anything is opened. */
function subscriptionId(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw.trim())) throw new UsageError(`subscription_id: expected a positive whole number, got "${raw}"`);
  return Number(raw.trim());
}

export function registerWebhookRecoveryCommands(program: Command): void {
  const webhooks = subcommand(program, 'webhooks');

  common(
    webhooks
      .command('enable <subscription_id>')
      .description('enable a disabled webhook subscription again in place (same id, history and deliveries)'),
  ).action(async (raw: string, opts: { database?: string; json: boolean }) => {
    const id = subscriptionId(raw);
    await withServices(opts.database, async (services) => {
      const before = await services.webhookRecovery.find('operator', id);
      const row = await services.webhookRecovery.enable('operator', id);
      const out = {
        id: String(row.id),
        store: before.store_name,
        topic: row.topic,
        address: row.address,
        status: row.disabled_at === null ? 'active' : 'disabled',
        was_disabled: before.disabled_at !== null,
      };
      const human = out.was_disabled
        ? `subscription ${out.id} (${out.topic} → ${out.address}) in ${out.store} is active again`
        : `subscription ${out.id} was already active`;
      print(opts.json, out, human);
    });
  });

  common(
    webhooks
      .command('replay <subscription_id>')
      .description("send a subscription's deliveries since a time again, each with its original webhook id")
      .requiredOption('--since <time>', 'ISO 8601 time: deliveries created at or after it, within the last 30 days')
      .addOption(
        new Option('--status <which>', 'failed (dead or cancelled) or all, delivered ones too')
          .choices(['failed', 'all'])
          .default('failed'),
      ),
  ).action(async (raw: string, opts: { database?: string; json: boolean; since: string; status: string }) => {
    const id = subscriptionId(raw);
    await withServices(opts.database, async (services) => {
      const answer = await services.webhookRecovery.replay('operator', id, { since: opts.since, status: opts.status });
      const more = answer.capped ? `; more matched: replay again with --since ${answer.next_since}` : '';
      const already = answer.already_queued > 0 ? ` (${answer.already_queued} already queued, left as they are)` : '';
      print(opts.json, answer, `queued ${answer.queued} deliveries of subscription ${answer.subscription_id} again${already}${more}`);
    });
  });
}

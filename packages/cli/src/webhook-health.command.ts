// storegate webhooks health --app <client_id> [--hours N] [--json]: the endpoint health of one app,
// the figures of its partner dashboard page: per endpoint (origin), attempts by outcome and the
// latency percentiles of its answers over the window, the state of its circuit breakers and the
// next attempt due; the hours with attempts below each endpoint (JSON: every hour of the window).
import type { Command } from 'commander';
import { type EndpointFigures, MAX_HEALTH_HOURS } from '@storegate/platform';
import { withServices } from './database.ts';
import { common } from './options.ts';
import { notFound, print, UsageError } from './output.ts';
import { table } from './table.ts';

const ms = (v: number | null) => (v === null ? '-' : `<=${v}ms`);

function breakerText(e: EndpointFigures): string {
  const b = e.breaker;
  if (b.state === 'closed') return 'closed';
  const stores = `${b.stores.length} store${b.stores.length === 1 ? '' : 's'}`;
  return b.state === 'open' ? `open until ${b.reopen_at ?? '-'} (${stores})` : `half-open (${stores})`;
}

function endpointsText(endpoints: readonly EndpointFigures[], hours: number): string {
  if (endpoints.length === 0) return `no webhook endpoint: no subscription, and no attempt in the last ${hours} hours`;
  const summary = table(
    endpoints,
    [
      ['ENDPOINT', (e) => e.endpoint],
      ['ATTEMPTS', (e) => e.totals.attempts],
      ['DELIVERED', (e) => e.totals.delivered],
      ['FAILED', (e) => e.totals.failed],
      ['NO_ANSWER', (e) => e.totals.no_answer],
      ['NOT_SENT', (e) => e.totals.not_sent],
      ['P50', (e) => ms(e.p50_ms)],
      ['P99', (e) => ms(e.p99_ms)],
      ['BREAKER', (e) => breakerText(e)],
      ['NEXT_ATTEMPT', (e) => e.next_attempt_at],
    ],
    '',
  );
  const hourly = endpoints
    .filter((e) => e.totals.attempts > 0)
    .map(
      (e) =>
        `\n${e.endpoint}\n${table(
          e.hourly.filter((h) => h.attempts > 0),
          [
            ['HOUR', (h) => h.hour],
            ['ATTEMPTS', (h) => h.attempts],
            ['DELIVERED', (h) => h.delivered],
            ['FAILED', (h) => h.failed],
            ['NO_ANSWER', (h) => h.no_answer],
            ['NOT_SENT', (h) => h.not_sent],
            ['P50', (h) => ms(h.p50_ms)],
            ['P99', (h) => ms(h.p99_ms)],
          ],
          '',
        )}`,
    );
  return [summary, ...hourly].join('\n');
}

export function registerWebhookHealthCommand(program: Command): void {
  const webhooks = program.commands.find((c) => c.name() === 'webhooks');
  if (!webhooks) throw new Error('the "webhooks" command must be registered first');
  common(
    webhooks
      .command('health')
      .description(
        "an app's webhook endpoints: attempts per hour by outcome, latency p50/p99 of answers (bucket bounds), breaker state, next attempt",
      ),
  )
    .requiredOption('--app <client_id>', 'the public app')
    .option('--hours <n>', `the last n hours, the current one included (1 to ${MAX_HEALTH_HOURS}; default ${MAX_HEALTH_HOURS})`)
    .action(async (opts: { database?: string; json: boolean; app: string; hours?: string }) => {
      const hours = opts.hours === undefined ? MAX_HEALTH_HOURS : Number(opts.hours);
      if (opts.hours !== undefined && (!/^\d{1,3}$/.test(opts.hours) || hours < 1 || hours > MAX_HEALTH_HOURS))
        throw new UsageError(`--hours: expected a whole number from 1 to ${MAX_HEALTH_HOURS}, got "${opts.hours.slice(0, 40)}"`);
      await withServices(opts.database, async (services) => {
        const app = await services.apps.findByClientId(opts.app);
        if (!app) throw notFound(`no app with client_id "${opts.app.slice(0, 100)}"`);
        const health = await services.endpointHealth.forApp(app.id, hours);
        print(opts.json, { client_id: app.client_id, name: app.name, ...health }, endpointsText(health.endpoints, hours));
      });
    });
}

// storegate webhooks trigger: one signed sample delivery of a topic sent to an address, signed and
// headed exactly as the worker's deliveries are, so an app's webhook handler can be tested before
// any store changes anything. `webhooks deliveries --follow` (followDeliveries) streams attempts.
import type { Command } from 'commander';
import {
  checkWebhookAddress,
  CURRENT_VERSION,
  isTopic,
  newWebhookId,
  samplePayload,
  storeHostname,
  TOPICS,
  webhookHeaders,
  type AttemptView,
  type DeliveryView,
} from '@storegate/platform';
import { adminConfig, withServices } from './database.ts';
import { stopOnSignals } from './lifecycle.ts';
import { common } from './options.ts';
import { examples } from './help.ts';
import { postOnce } from './webhook-post.ts';
import { CliError, notFound, print, UsageError } from './output.ts';

interface TriggerOptions {
  database?: string;
  json: boolean;
  address: string;
  clientId?: string;
  secret?: string;
  store: string;
  timeout: string;
}

const TRIGGER_HELP = `
Signing: --client-id signs with that app's client secret (both secrets while a rotation lasts, as
deliveries are); --secret signs with the secret given (no database needed). A 2xx answer prints
the status and exits 0; any other answer, or none, exits 1 with the status and the answer's start.

Topics: ${TOPICS.join(', ')}`;

function deadline(value: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1)
    throw new UsageError(`--timeout: expected milliseconds (1-999999), got "${value.slice(0, 20)}"`);
  return Number(value);
}

export function registerWebhookToolCommands(program: Command): void {
  const webhooks = program.commands.find((c) => c.name() === 'webhooks');
  if (!webhooks) throw new Error('the "webhooks" command must be registered first');
  const trigger = common(webhooks.command('trigger <topic>').description('send a signed sample delivery of a topic to an address'))
    .requiredOption('--address <url>', 'where to POST it, e.g. http://localhost:3000/webhooks')
    .option('--client-id <id>', "sign with this app's client secret (read from the database)")
    .option('--secret <secret>', 'sign with this secret instead')
    .option('--store <name>', 'the store the sample comes from (its domain is in the headers)', 'demo')
    .option('--timeout <ms>', 'how long to wait for the answer', '10000')
    .addHelpText('after', TRIGGER_HELP)
    .action(async (topic: string, opts: TriggerOptions) => {
      if (!isTopic(topic)) throw new UsageError(`unknown topic "${topic.slice(0, 60)}"; topics: ${TOPICS.join(', ')}`);
      if ((opts.clientId === undefined) === (opts.secret === undefined))
        throw new UsageError("give exactly one of --client-id (sign with that app's secret) or --secret");
      if (opts.secret === '') throw new UsageError('--secret: must not be empty');
      const timeoutMs = deadline(opts.timeout);
      const mode = process.env.NODE_ENV === 'production' ? 'production' : 'development';
      const problem = checkWebhookAddress(opts.address, mode);
      if (problem) throw new UsageError(`--address ${problem}`);
      const config = adminConfig(opts.database);
      const storeName = opts.store.toLowerCase();
      let storeId = '1';
      let secrets: { current: string; previous?: string | undefined } = { current: opts.secret ?? '' };
      if (opts.clientId !== undefined) {
        const clientId = opts.clientId;
        await withServices(opts.database, async (services) => {
          const app = await services.apps.findByClientId(clientId);
          if (!app) throw notFound(`--client-id: no app with client_id "${clientId.slice(0, 100)}"`);
          secrets = services.rotations.clientSigningSecrets(app);
          const store = await services.accounts.findStoreByName(storeName);
          if (store) storeId = String(store.id);
        });
      }
      const shopDomain = storeHostname(storeName, config.storeDomain);
      const webhookId = newWebhookId();
      const now = Date.now();
      const body = JSON.stringify(samplePayload(topic, { storeId, shopDomain, clientId: opts.clientId }));
      const message = {
        webhookId,
        eventId: `evt_sample_${webhookId.slice(3)}`,
        topic,
        shopDomain,
        apiVersion: CURRENT_VERSION,
        triggeredAt: now,
        body,
      };
      const started = performance.now();
      let status: number | null = null;
      let error: string | null = null;
      let responseBody = '';
      try {
        const res = await postOnce(opts.address, webhookHeaders(secrets, message, now), body, timeoutMs);
        status = res.status;
        responseBody = res.body;
      } catch (err) {
        error = describe(err);
      }
      const latencyMs = Math.round(performance.now() - started);
      const ok = status !== null && status >= 200 && status < 300;
      const out = {
        topic,
        address: opts.address,
        webhook_id: webhookId,
        status,
        ok,
        latency_ms: latencyMs,
        response_body: responseBody || null,
        error,
      };
      const human = `POST ${opts.address}  ${topic}  ${status ?? 'no answer'}${error ? ` (${error})` : ''}  ${latencyMs} ms  ${webhookId}`;
      if (!ok) {
        const answer = responseBody.replace(/\s+/g, ' ').slice(0, 200);
        throw new CliError(
          status === null
            ? `${opts.address}: no answer (${error}); webhook id ${webhookId}`
            : `${opts.address} answered ${status}${answer ? `: ${answer}` : ''}; webhook id ${webhookId}`,
          'webhook_not_accepted',
        );
      }
      print(opts.json, out, human);
    });
  examples(
    trigger,
    'storegate webhooks trigger products/create --address http://localhost:3000/webhooks --client-id <client_id>',
    'storegate webhooks trigger app/uninstalled --address http://127.0.0.1:3000/webhooks --secret "$STOREGATE_CLIENT_SECRET" --json',
  );
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  if (e.code === 'ECONNREFUSED') return 'connection refused';
  if (e.code === 'ENOTFOUND') return 'the host name could not be resolved';
  return e.message ?? String(err);
}

export interface FollowOptions {
  database?: string;
  json: boolean;
  app?: string;
  store?: string;
}

/** How often the log is read while following: a person watching, not a load on the database. */
const FOLLOW_POLL_MS = 500;
/** The deliveries looked at on each read, newest first: retries of older ones fall out of view. */
const FOLLOW_WINDOW = 200;

/**
 * Prints every attempt recorded after it starts, one line (or JSON object) each, until SIGINT or
 * SIGTERM. It polls the delivery log: attempts are rows in the database whichever process made them.
 */
export async function followDeliveries(opts: FollowOptions): Promise<void> {
  let stopped = false;
  let wake: () => void = () => {};
  let closed: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    closed = resolve;
  });
  // The signal ends the loop; the process exits once the database is closed.
  stopOnSignals(
    async () => {
      stopped = true;
      wake();
      await done;
    },
    (line) => process.stderr.write(`${line}\n`),
  );
  await withServices(opts.database, async (services) => {
    const seen = new Map<string, number>();
    const read = () => services.deliveries.list({ appClientId: opts.app, storeName: opts.store, limit: FOLLOW_WINDOW });
    for (const d of await read()) seen.set(d.id, d.attempts);
    // On stderr, so that stdout stays one attempt per line (and only JSON with --json).
    process.stderr.write('following webhook attempts (Ctrl-C to stop)\n');
    while (!stopped) {
      for (const d of (await read()).reverse()) {
        const before = seen.get(d.id) ?? 0;
        if (d.attempts <= before) continue;
        const attempts = await services.deliveries.attempts(Number(d.id));
        for (let i = before; i < attempts.length; i++) printAttempt(opts.json, d, i + 1, attempts[i]!);
        seen.set(d.id, d.attempts);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, FOLLOW_POLL_MS);
      });
    }
  }).finally(() => closed());
}

function printAttempt(json: boolean, d: DeliveryView, n: number, a: AttemptView): void {
  const out = {
    delivery_id: d.id,
    webhook_id: d.webhook_id,
    topic: d.topic,
    store: d.store,
    app: d.app,
    address: d.address,
    attempt: n,
    attempted_at: a.attempted_at,
    status: a.status,
    latency_ms: a.latency_ms,
    error: a.error,
    delivery_status: d.status,
  };
  const answer = `${String(a.status ?? '---').padEnd(3)}  ${String(a.latency_ms).padStart(5)} ms`;
  const where = `${d.store}  ${d.app}  ${d.address ?? ''}${a.error ? `  (${a.error})` : ''}`;
  const human = `${a.attempted_at}  ${d.topic.padEnd(16)}  ${answer}  #${n}  ${where}  ${d.status}  ${d.webhook_id}`;
  print(json, out, human);
}

// storegate.app.toml: reading and checking an app's configuration file. Every problem names the
// file, the line when it can be found, and the field, so a typo is found without guessing.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  checkSubscriptionShape,
  checkWebhookAddress,
  isPrivacyTopic,
  isTopic,
  SUBSCRIBABLE_TOPICS,
  type WebhookTopic,
} from '@storegate/platform';
import { CliError } from './output.ts';

// The TOML parser is loaded by the commands that read an app configuration, not by every process
// of the CLI (a server never reads one).
const require = createRequire(import.meta.url);

export interface AppConfigFile {
  clientId?: string;
  name: string;
  appUrl: string;
  redirectUri: string;
  /** Space-separated, as the platform reads them. */
  scopes: string;
  /** undefined: the file does not say (left as it is); "": none. */
  privacyWebhookUrl?: string;
  /** Whether the platform installs the app (consent for `scopes`, then a launch token); undefined: left as it is. */
  managedInstall?: boolean;
  /** Whether the redirect with the code carries `iss`; undefined: left as it is. */
  authorizationIss?: boolean;
  /** Whether webhooks also carry `v1a` (Ed25519) signatures; undefined: left as it is. */
  ed25519Signatures?: boolean;
  /** A left-out `filter` or `include_fields` is none: the file declares the whole subscription. */
  subscriptions: { topic: WebhookTopic; address: string; filter: string | null; includeFields: string[] | null }[];
}

const SUBSCRIPTION_KEYS = ['topic', 'address', 'filter', 'include_fields'];

const TOP_KEYS = [
  'client_id',
  'name',
  'application_url',
  'redirect_url',
  'scopes',
  'managed_install',
  'authorization_iss',
  'ed25519_signatures',
  'privacy_webhook_url',
  'webhooks',
];

/** A field's problem; `sub` is the index of the `[[webhooks.subscriptions]]` entry it is in. */
interface Problem {
  field: string;
  message: string;
  sub?: number;
}

/** The 1-based line of `field` (in the sub-th subscription when given), or undefined. */
function lineOf(source: string, p: Problem): number | undefined {
  const lines = source.split(/\r?\n/);
  const key = p.field
    .split('.')
    .pop()!
    .replace(/\[\d+\]$/, '');
  const keyLine = new RegExp(`^\\s*"?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*=`);
  let from = 0;
  let to = lines.length;
  if (p.sub !== undefined) {
    const headers = lines.flatMap((l, i) => (/^\s*\[\[\s*webhooks\.subscriptions\s*\]\]/.test(l) ? [i] : []));
    if (headers[p.sub] === undefined) return undefined;
    from = headers[p.sub]!;
    const next = lines.findIndex((l, i) => i > from && /^\s*\[/.test(l));
    to = next === -1 ? lines.length : next;
    if (key === 'subscriptions') return from + 1;
  } else {
    const firstTable = lines.findIndex((l) => /^\s*\[/.test(l));
    if (firstTable !== -1 && p.field !== 'webhooks') to = firstTable;
  }
  for (let i = from; i < to; i++) if (keyLine.test(lines[i]!)) return i + 1;
  return undefined;
}

function fail(file: string, source: string, problems: Problem[]): never {
  const text = problems
    .map((p) => {
      const line = lineOf(source, p);
      return `${file}${line ? `:${line}` : ''}: ${p.field} ${p.message}`;
    })
    .join('; ');
  throw new CliError(text, 'invalid_config');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

export function readAppConfig(file: string): AppConfigFile {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new CliError(
      code === 'ENOENT'
        ? `${file}: no such file (write one, see \`storegate apps deploy --help\`, or give --config)`
        : `${file}: cannot read it (${code ?? 'error'})`,
    );
  }
  const { parse, TomlError } = require('smol-toml') as typeof import('smol-toml');
  let doc: Record<string, unknown>;
  try {
    doc = parse(source) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) throw new CliError(`${file}:${err.line}:${err.column}: ${err.message.split('\n')[0]}`, 'invalid_config');
    throw err;
  }
  const problems: Problem[] = [];
  for (const key of Object.keys(doc))
    if (!TOP_KEYS.includes(key)) problems.push({ field: key, message: `is not a known field (${TOP_KEYS.join(', ')})` });
  const text = (field: string, required: boolean): string | undefined => {
    const v = doc[field];
    if (v === undefined) {
      if (required) problems.push({ field, message: 'is required' });
      return undefined;
    }
    if (typeof v !== 'string') {
      problems.push({ field, message: 'must be a string' });
      return undefined;
    }
    return v;
  };
  const clientId = text('client_id', false);
  const name = text('name', true) ?? '';
  const appUrl = text('application_url', true) ?? '';
  const redirectUri = text('redirect_url', true) ?? '';
  const privacyWebhookUrl = text('privacy_webhook_url', false);
  let scopes = '';
  const rawScopes = doc.scopes;
  if (typeof rawScopes === 'string')
    scopes = rawScopes
      .split(/[\s,]+/)
      .filter(Boolean)
      .join(' ');
  else if (Array.isArray(rawScopes) && rawScopes.every((s) => typeof s === 'string')) scopes = rawScopes.join(' ');
  else if (rawScopes !== undefined) problems.push({ field: 'scopes', message: 'must be a list of scopes, e.g. ["read_products"]' });
  const flag = (field: string): boolean | undefined => {
    const v = doc[field];
    if (v === undefined || typeof v === 'boolean') return v;
    problems.push({ field, message: 'must be true or false (without quotes)' });
    return undefined;
  };
  const managedInstall = flag('managed_install');
  const authorizationIss = flag('authorization_iss');
  const ed25519Signatures = flag('ed25519_signatures');
  // The platform asks the merchant for the declared scopes: without any there is nothing to ask.
  if (managedInstall === true && scopes === '' && !problems.some((p) => p.field === 'scopes'))
    problems.push({ field: 'managed_install', message: 'needs scopes: an app the platform installs must declare the scopes it needs' });

  const subscriptions: AppConfigFile['subscriptions'] = [];
  const webhooks = doc.webhooks;
  if (webhooks !== undefined) {
    if (!isRecord(webhooks)) problems.push({ field: 'webhooks', message: 'must be a table' });
    else {
      for (const key of Object.keys(webhooks))
        if (key !== 'subscriptions') problems.push({ field: `webhooks.${key}`, message: 'is not a known field (subscriptions)' });
      const subs = webhooks.subscriptions;
      if (subs !== undefined && !(Array.isArray(subs) && subs.every(isRecord)))
        problems.push({ field: 'webhooks.subscriptions', message: 'must be an array of tables ([[webhooks.subscriptions]])' });
      else
        (subs ?? []).forEach((s: Record<string, unknown>, i) => {
          const at = `webhooks.subscriptions[${i}]`;
          for (const key of Object.keys(s))
            if (!SUBSCRIPTION_KEYS.includes(key))
              problems.push({ field: `${at}.${key}`, message: `is not a known field (${SUBSCRIPTION_KEYS.join(', ')})`, sub: i });
          const { topic, address } = s;
          const shape = subscriptionShape(s, at, i, problems);
          if (typeof topic !== 'string' || !(SUBSCRIBABLE_TOPICS as readonly string[]).includes(topic))
            problems.push({ field: `${at}.topic`, message: `must be one of ${SUBSCRIBABLE_TOPICS.join(', ')}${whyNot(topic)}`, sub: i });
          const mode = process.env.NODE_ENV === 'production' ? 'production' : 'development';
          const problem = checkWebhookAddress(address, mode);
          if (problem) problems.push({ field: `${at}.address`, message: problem, sub: i });
          if (typeof topic === 'string' && isTopic(topic) && !problem && typeof address === 'string') {
            if (subscriptions.some((x) => x.topic === topic && x.address === address))
              problems.push({ field: `${at}`, message: 'is listed twice', sub: i });
            else if (shape) {
              // The platform's one rule for what a subscription to this topic may filter and include.
              const checked = checkSubscriptionShape(topic, shape);
              if (checked.ok) subscriptions.push({ topic, address, filter: checked.filter, includeFields: checked.includeFields });
              else
                for (const [key, msgs] of Object.entries(checked.errors))
                  problems.push({ field: `${at}.${key}`, message: msgs.join(', '), sub: i });
            }
          }
        });
    }
  }
  if (problems.length > 0) fail(file, source, problems);
  return {
    ...(clientId ? { clientId } : {}),
    name,
    appUrl,
    redirectUri,
    scopes,
    privacyWebhookUrl,
    ...(managedInstall !== undefined ? { managedInstall } : {}),
    ...(authorizationIss !== undefined ? { authorizationIss } : {}),
    ...(ed25519Signatures !== undefined ? { ed25519Signatures } : {}),
    subscriptions,
  };
}

/** An entry's `filter` (a string) and `include_fields` (a list of strings) as typed, or undefined after a problem. */
function subscriptionShape(
  s: Record<string, unknown>,
  at: string,
  sub: number,
  problems: Problem[],
): { filter: string | null; includeFields: string[] | null } | undefined {
  const { filter, include_fields: fields } = s;
  let ok = true;
  if (filter !== undefined && typeof filter !== 'string') {
    problems.push({ field: `${at}.filter`, message: 'must be a string, e.g. "status:active AND price:>=10"', sub });
    ok = false;
  }
  if (fields !== undefined && !(Array.isArray(fields) && fields.every((f) => typeof f === 'string'))) {
    problems.push({ field: `${at}.include_fields`, message: 'must be a list of field names, e.g. ["id", "title"]', sub });
    ok = false;
  }
  if (!ok) return undefined;
  return { filter: (filter as string | undefined) ?? null, includeFields: (fields as string[] | undefined) ?? null };
}

/** A field error of the platform's checks (e.g. an App URL it refuses), with the file's line. */
export function fieldErrors(file: string, errors: Record<string, string[]>): never {
  const names: Record<string, string> = { app_url: 'application_url', redirect_uri: 'redirect_url' };
  let source = '';
  try {
    source = readFileSync(file, 'utf8');
  } catch {}
  fail(
    file,
    source,
    Object.entries(errors).map(([field, msgs]) => {
      // The platform names a subscription's field `subscriptions[i].<field>`: the i-th table of the file.
      const sub = /^subscriptions\[(\d+)\]/.exec(field);
      if (sub) return { field: `webhooks.${field}`, message: msgs.join(', '), sub: Number(sub[1]) };
      return { field: names[field] ?? field, message: msgs.join(', ') };
    }),
  );
}

/** Why a topic that exists cannot be subscribed to here (empty for one that does not exist). */
function whyNot(topic: unknown): string {
  if (typeof topic !== 'string') return '';
  if (isPrivacyTopic(topic)) return ' (privacy topics go to privacy_webhook_url)';
  return isTopic(topic) ? ' (it is sent without a subscription)' : '';
}

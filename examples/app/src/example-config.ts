// The example app's settings, read from the environment once and validated: every bad or missing
// value is reported in one error, before anything listens. Defaults match the demo app that
// `npm start` seeds (App URL http://localhost:3000/, redirect http://localhost:3000/auth/callback).
import { fileURLToPath } from 'node:url';

/** The Admin API versions the products page can switch between. */
export const API_VERSIONS = ['2022-01', '2025-06', '2026-01', '2026-10'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

/** The topics the app subscribes to after an install. */
export const WEBHOOK_TOPICS = ['products/create', 'products/update', 'app/uninstalled'] as const;

/** Scopes of the demo app (packages/platform/src/services/demo-seed.ts). */
export const DEMO_SCOPES = 'read_products write_products read_orders read_customers';

export interface ExampleConfig {
  clientId: string;
  clientSecret: string;
  scopes: string;
  /** Where the server listens. */
  host: string;
  port: number;
  /** The App URL registered with the platform (the install request arrives here). */
  appUrl: string;
  /** The App Redirect URL registered with the platform. */
  redirectUri: string;
  /** The address the platform posts webhooks to. */
  webhookAddress: string;
  storeDomain: string;
  /** Origin of a shop's platform address, with `{shop}`. */
  apiOrigin: string;
  apiVersion: ApiVersion;
  /** `memory`, or the path of the SQLite file holding sessions. */
  sessionStorage: 'memory' | { sqlitePath: string };
  /** How many webhooks the events page keeps. */
  webhookLogSize: number;
  /** Products per page. */
  pageSize: number;
  /**
   * Managed install (`STOREGATE_MANAGED_INSTALL=1`): the App URL takes the platform's signed launch
   * (hmac + id_token) and exchanges the launch token for tokens, with no OAuth redirect of its own.
   */
  managedInstall: boolean;
}

export class ExampleConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`The example app cannot start:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ExampleConfigError';
    this.problems = problems;
  }
}

const DEFAULT_SQLITE_PATH = fileURLToPath(new URL('../data/sessions.db', import.meta.url));

const MISSING_CREDENTIALS =
  'STOREGATE_CLIENT_ID and STOREGATE_CLIENT_SECRET are required: the client_id and client_secret of the ' +
  '"Demo app" that `npm start` prints (under "demo app:"). Run, for example:\n' +
  '      STOREGATE_CLIENT_ID=<client_id> STOREGATE_CLIENT_SECRET=<client_secret> npm run example\n' +
  "    or, with the app's env lines: npx storegate apps env <client_id> > .env; set -a; . ./.env; set +a; npm run example";

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    return fallback;
  }
  return Number(raw);
}

function httpUrl(env: Env, name: string, fallback: string, problems: string[]): string {
  const value = env[name]?.trim() || fallback;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    if (url.hash !== '' || value.includes('#')) {
      problems.push(`${name} must not contain "#" (got "${value}")`);
    }
  } catch {
    problems.push(`${name} must be an http(s) URL (got "${value}")`);
  }
  return value;
}

/**
 * Reads the settings from `env` (normally `process.env`).
 *
 * | variable | default |
 * |---|---|
 * | `STOREGATE_CLIENT_ID`, `STOREGATE_CLIENT_SECRET` | required (printed by `npm start`) |
 * | `STOREGATE_SCOPES` | `read_products write_products read_orders read_customers` |
 * | `STOREGATE_STORE_DOMAIN` | `localhost` |
 * | `STOREGATE_API_ORIGIN` | `http://{shop}:8080` |
 * | `STOREGATE_API_VERSION` | `2026-01` (also `2026-10`, unwrapped by the SDK, `2025-06`, `2022-01`) |
 * | `APP_HOST`, `APP_PORT` | `127.0.0.1`, `3000` |
 * | `APP_URL` | `http://localhost:{APP_PORT}/` |
 * | `APP_REDIRECT_URI` | `{APP_URL}auth/callback` |
 * | `APP_WEBHOOK_ADDRESS` | `{APP_URL}webhooks` |
 * | `APP_SESSION_STORAGE` | `sqlite` (file `APP_SESSION_DB`, default `examples/app/data/sessions.db`) or `memory` |
 * | `APP_WEBHOOK_LOG_SIZE` | `50` |
 * | `APP_PAGE_SIZE` | `10` |
 * | `STOREGATE_MANAGED_INSTALL` | `0` (OAuth at the App URL); `1`: managed install (token exchange of the launch token) |
 */
export function loadExampleConfig(env: Env): ExampleConfig {
  const problems: string[] = [];
  const clientId = env['STOREGATE_CLIENT_ID']?.trim() ?? '';
  const clientSecret = env['STOREGATE_CLIENT_SECRET']?.trim() ?? '';
  if (clientId === '' || clientSecret === '') problems.push(MISSING_CREDENTIALS);

  const scopes = (env['STOREGATE_SCOPES'] ?? DEMO_SCOPES)
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(' ');
  if (scopes === '') problems.push('STOREGATE_SCOPES must name at least one scope, e.g. "read_products"');

  const storeDomain = (env['STOREGATE_STORE_DOMAIN']?.trim() || 'localhost').toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(storeDomain)) {
    problems.push(`STOREGATE_STORE_DOMAIN must be a host name such as "localhost" or "example.com" (got "${storeDomain}")`);
  }
  const apiOrigin = env['STOREGATE_API_ORIGIN']?.trim() || 'http://{shop}:8080';
  if (!/^https?:\/\/[^/?#]*\{shop\}[^/?#]*\/?$/.test(apiOrigin)) {
    problems.push(`STOREGATE_API_ORIGIN must be an origin containing {shop}, such as "http://{shop}:8080" (got "${apiOrigin}")`);
  }
  const version = env['STOREGATE_API_VERSION']?.trim() || '2026-01';
  if (!(API_VERSIONS as readonly string[]).includes(version)) {
    problems.push(`STOREGATE_API_VERSION must be one of ${API_VERSIONS.join(', ')} (got "${version}")`);
  }

  const host = env['APP_HOST']?.trim() || '127.0.0.1';
  const port = integer(env, 'APP_PORT', 3000, 0, 65535, problems);
  const appUrl = httpUrl(env, 'APP_URL', `http://localhost:${port}/`, problems);
  const base = appUrl.endsWith('/') ? appUrl : `${appUrl}/`;
  const redirectUri = httpUrl(env, 'APP_REDIRECT_URI', `${base}auth/callback`, problems);
  const webhookAddress = httpUrl(env, 'APP_WEBHOOK_ADDRESS', `${base}webhooks`, problems);

  const storageKind = env['APP_SESSION_STORAGE']?.trim() || 'sqlite';
  let sessionStorage: ExampleConfig['sessionStorage'] = 'memory';
  if (storageKind === 'sqlite') sessionStorage = { sqlitePath: env['APP_SESSION_DB']?.trim() || DEFAULT_SQLITE_PATH };
  else if (storageKind !== 'memory') problems.push(`APP_SESSION_STORAGE must be "sqlite" or "memory" (got "${storageKind}")`);

  const webhookLogSize = integer(env, 'APP_WEBHOOK_LOG_SIZE', 50, 1, 10_000, problems);
  const pageSize = integer(env, 'APP_PAGE_SIZE', 10, 1, 250, problems);
  const managedRaw = env['STOREGATE_MANAGED_INSTALL']?.trim().toLowerCase() ?? '';
  if (!['', '0', '1', 'false', 'true'].includes(managedRaw))
    problems.push(`STOREGATE_MANAGED_INSTALL must be 1 (managed install) or 0 (OAuth at the App URL) (got "${managedRaw}")`);
  const managedInstall = managedRaw === '1' || managedRaw === 'true';

  if (problems.length > 0) throw new ExampleConfigError(problems);
  return {
    clientId,
    clientSecret,
    scopes,
    host,
    port,
    appUrl,
    redirectUri,
    webhookAddress,
    storeDomain,
    apiOrigin,
    apiVersion: version as ApiVersion,
    sessionStorage,
    webhookLogSize,
    pageSize,
    managedInstall,
  };
}

/** The store admin of `store` on the platform this app expects (`STOREGATE_API_ORIGIN`, `http://{shop}:8080` by default). */
export function storeAdminUrl(config: Pick<ExampleConfig, 'apiOrigin' | 'storeDomain'>, store = 'demo'): string {
  return `${config.apiOrigin.replace(/\/+$/, '').split('{shop}').join(`${store}.${config.storeDomain}`)}/admin`;
}

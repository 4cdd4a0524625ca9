// The one configuration object of `createApp`, validated once: unknown keys, missing values and
// bad values are all reported together in one ConfigError.
import type { CallLimitOptions } from '../api/call-limit.ts';
import { DEFAULT_RETRY, timerSleep, type ResolvedRetryOptions, type RetryOptions, type Sleep } from '../api/retry-policy.ts';
import { cryptoRandomBytes, type RandomBytes } from '../crypto/random.ts';
import { ConfigError, type ReauthorizationRequiredError } from '../errors.ts';
import type { Logger } from '../logging/redacting-logger.ts';
import type { RefreshLock } from '../oauth/refresh-lock.ts';
import { memorySessionStorage } from '../session/memory-session-storage.ts';
import type { SessionStorage } from '../session/session.ts';
import type { JsonWebKeySet, WebhookKeySource } from '../signature/webhook-public-keys.ts';

/** A clock in milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

/** How Admin API calls present the access token. */
export type ApiAuthentication = 'access-token' | 'bearer';

/** How list endpoints page: `has_more` (API versions from 2025-01 on) or `pre_cursor` (older versions). */
export type PaginationConvention = 'has_more' | 'pre_cursor';

/** Everything `createApp` accepts. Only the first four are required. */
export interface AppConfig {
  /** The app's Client ID. */
  clientId: string;
  /** The Client Secret; during a rotation a list, current first (all verify, the first signs). */
  clientSecret: string | readonly string[];
  /** Scopes to request, as a list or a space/comma-separated string. */
  scopes: string | readonly string[];
  /** The App Redirect URL registered with the app, exactly (no `#`). */
  redirectUri: string;
  /** The platform's store domain (default `localhost`, the platform's default). */
  storeDomain?: string;
  /**
   * Where a shop's API lives: a function of the shop, or a template with `{shop}`. Default
   * `http://{shop}:8080` when `storeDomain` is `localhost` (the development platform), else `https://{shop}`.
   */
  apiOrigin?: string | ((shop: string) => string);
  /** Admin API version pinned in every path (default `2026-01`). */
  apiVersion?: string;
  /** Pagination convention; default from the version (`2022-01` → `pre_cursor`, later → `has_more`). */
  pagination?: PaginationConvention;
  /** Where sessions live (default: memory). */
  sessionStorage?: SessionStorage;
  /** Cross-process lock taken around a token refresh (e.g. `redisRefreshLock`). */
  refreshLock?: RefreshLock;
  /** `fetch` implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Clock (default `Date`). */
  clock?: Clock;
  /** How the SDK waits between retries (default `setTimeout`). */
  sleep?: Sleep;
  /** Random bytes (default `crypto.getRandomValues`). */
  randomBytes?: RandomBytes;
  /** Log hook; never receives a token or secret. */
  logger?: Logger;
  /** Prefix of the platform's headers (default `X-Service-`). */
  headerPrefix?: string;
  /** Webhook body-signature header (default `{headerPrefix}Hmac-Sha256`). */
  signatureHeader?: string;
  /** Header carrying the access token (default `Access-Token`); only with `apiAuthentication: 'access-token'`. */
  accessTokenHeader?: string;
  /**
   * How Admin API calls present the token: `'access-token'` (default: the `Access-Token` header,
   * which every platform of the family reads) or `'bearer'` (`Authorization: Bearer <token>`,
   * RFC 6750, for platforms and proxies that expect it).
   */
  apiAuthentication?: ApiAuthentication;
  /** Allowed clock skew for signed `timestamp`s, seconds (default 300). */
  timestampToleranceSeconds?: number;
  /** Refuse webhooks that lack the Standard Webhooks signature (replay protection); default false. */
  requireStandardWebhookSignature?: boolean;
  /**
   * The platform's public keys, to accept `v1a` (Ed25519) webhook signatures beside the client
   * secret's: a JSON Web Key Set or `remoteJwks('<platform>/.well-known/jwks.json')`.
   */
  webhookPublicKeys?: JsonWebKeySet | WebhookKeySource;
  /** Lifetime of an OAuth `state`, seconds (default 600). */
  stateTtlSeconds?: number;
  /** Name of the state cookie (default `storegate_state`). */
  stateCookieName?: string;
  /** Refresh this many seconds before `expiresAt` (default 60). */
  refreshMarginSeconds?: number;
  /** Per-request timeout, ms (default 30000). */
  requestTimeoutMs?: number;
  /** Retries of API calls and token refreshes (on by default). */
  retry?: RetryOptions;
  /** Client-side pacing from `X-Service-Api-Call-Limit`; `false` turns it off. */
  callLimit?: CallLimitOptions | false;
  /** Called when a shop's grant is gone and the merchant must authorize again. */
  onReauthorizationRequired?: (event: { shop: string; error: ReauthorizationRequiredError }) => void | Promise<void>;
}

/** The validated configuration with every default filled in. */
export interface ResolvedConfig {
  clientId: string;
  clientSecrets: readonly string[];
  scopes: readonly string[];
  redirectUri: string;
  storeDomain: string;
  apiOrigin: (shop: string) => string;
  apiVersion: string;
  pagination: PaginationConvention;
  sessionStorage: SessionStorage;
  refreshLock: RefreshLock | undefined;
  fetch: typeof fetch;
  clock: Clock;
  sleep: Sleep;
  randomBytes: RandomBytes;
  logger: Logger | undefined;
  headerPrefix: string;
  signatureHeader: string | undefined;
  accessTokenHeader: string;
  apiAuthentication: ApiAuthentication;
  timestampToleranceSeconds: number;
  requireStandardWebhookSignature: boolean;
  webhookPublicKeys: JsonWebKeySet | WebhookKeySource | undefined;
  stateTtlSeconds: number;
  stateCookieName: string;
  refreshMarginSeconds: number;
  requestTimeoutMs: number;
  retry: ResolvedRetryOptions;
  callLimit: CallLimitOptions | false;
  onReauthorizationRequired: AppConfig['onReauthorizationRequired'];
}

const KNOWN_KEYS: ReadonlySet<string> = new Set<keyof AppConfig>([
  'clientId',
  'clientSecret',
  'scopes',
  'redirectUri',
  'storeDomain',
  'apiOrigin',
  'apiVersion',
  'pagination',
  'sessionStorage',
  'refreshLock',
  'fetch',
  'clock',
  'sleep',
  'randomBytes',
  'logger',
  'headerPrefix',
  'signatureHeader',
  'accessTokenHeader',
  'apiAuthentication',
  'timestampToleranceSeconds',
  'requireStandardWebhookSignature',
  'webhookPublicKeys',
  'stateTtlSeconds',
  'stateCookieName',
  'refreshMarginSeconds',
  'requestTimeoutMs',
  'retry',
  'callLimit',
  'onReauthorizationRequired',
]);

/** Default Admin API version. */
export const DEFAULT_API_VERSION = '2026-01';

/** The pagination convention of an API version: `pre_cursor` before 2025-01, `has_more` from then on. */
export function paginationForVersion(version: string): PaginationConvention {
  return version < '2025-01' ? 'pre_cursor' : 'has_more';
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return value !== null && typeof value === 'object';
}

function isStringList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((item: unknown) => typeof item === 'string');
}

/** Splits a scope list given as a string (spaces or commas) or an array. */
export function normalizeScopes(scopes: string | readonly string[]): string[] {
  const list = typeof scopes === 'string' ? scopes.split(/[\s,]+/) : scopes.flatMap((s) => s.split(/[\s,]+/));
  return [...new Set(list.map((s) => s.trim()).filter((s) => s !== ''))];
}

/**
 * Validates an app config and fills in the defaults; throws {@link ConfigError} listing every
 * problem (unknown keys, missing values, bad values).
 *
 * @example
 * ```ts
 * try {
 *   resolveConfig({ clientId: 'x' } as AppConfig);
 * } catch (e) {
 *   if (e instanceof ConfigError) console.error(e.problems); // ['clientSecret is required', …]
 * }
 * ```
 */
export function resolveConfig(input: AppConfig): ResolvedConfig {
  const problems: string[] = [];
  // JavaScript callers can pass anything, so each key is read as `unknown` and checked before use.
  const candidate: unknown = input;
  if (!isRecord(candidate)) throw new ConfigError(['config must be an object']);
  const raw = candidate;
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) problems.push(`unknown key "${key}"`);
  }
  const requireString = (key: keyof AppConfig) => {
    const v = raw[key];
    if (v === undefined || v === null || v === '') problems.push(`${key} is required`);
    else if (typeof v !== 'string') problems.push(`${key} must be a string`);
  };
  requireString('clientId');
  requireString('redirectUri');

  let clientSecrets: string[] = [];
  const secret = raw['clientSecret'];
  if (secret === undefined || secret === null || secret === '') problems.push('clientSecret is required');
  else if (typeof secret === 'string') clientSecrets = [secret];
  else if (isStringList(secret) && secret.length > 0 && secret.every((s) => s !== '')) clientSecrets = [...secret];
  else problems.push('clientSecret must be a non-empty string or a non-empty list of them');

  let scopes: string[] = [];
  const scopeInput = raw['scopes'];
  if (scopeInput === undefined || scopeInput === null) problems.push('scopes is required');
  else if (typeof scopeInput === 'string' || isStringList(scopeInput)) {
    scopes = normalizeScopes(scopeInput);
    if (scopes.length === 0) problems.push('scopes must name at least one scope');
    for (const s of scopes)
      if (!/^(read|write)_[a-z_]+$/.test(s)) problems.push(`scope "${s}" is not of the form read_<resource> or write_<resource>`);
  } else problems.push('scopes must be a string or a list of strings');

  if (typeof input.redirectUri === 'string' && input.redirectUri !== '') {
    if (input.redirectUri.includes('#'))
      problems.push('redirectUri must not contain "#" (an OAuth redirect URI has no fragment, RFC 6749 section 3.1.2)');
    else if (!/^https?:\/\/[^/?#]+/.test(input.redirectUri)) problems.push('redirectUri must be an absolute http(s) URL');
  }
  const storeDomain = input.storeDomain ?? 'localhost';
  if (typeof storeDomain !== 'string' || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(storeDomain)) {
    problems.push('storeDomain must be a lower-case domain name such as "localhost" or "example-shops.com"');
  }
  let apiOrigin: (shop: string) => string = storeDomain === 'localhost' ? (shop) => `http://${shop}:8080` : (shop) => `https://${shop}`;
  if (typeof input.apiOrigin === 'function') apiOrigin = input.apiOrigin;
  else if (typeof input.apiOrigin === 'string') {
    const template = input.apiOrigin.replace(/\/+$/, '');
    if (!/^https?:\/\//.test(template)) problems.push('apiOrigin must be an http(s) origin template such as "https://{shop}"');
    apiOrigin = (shop) => template.split('{shop}').join(shop);
  } else if (input.apiOrigin !== undefined) problems.push('apiOrigin must be a string template or a function');

  const apiVersion = input.apiVersion ?? DEFAULT_API_VERSION;
  if (typeof apiVersion !== 'string' || !/^\d{4}-\d{2}$/.test(apiVersion)) problems.push('apiVersion must have the form YYYY-MM');
  if (input.pagination !== undefined && input.pagination !== 'has_more' && input.pagination !== 'pre_cursor') {
    problems.push('pagination must be "has_more" or "pre_cursor"');
  }
  const sessionStorage = input.sessionStorage ?? memorySessionStorage();
  for (const m of ['get', 'set', 'delete', 'compareAndSet'] as const) {
    if (typeof sessionStorage[m] !== 'function') problems.push(`sessionStorage must implement ${m}()`);
  }
  if (input.refreshLock !== undefined && typeof input.refreshLock?.acquire !== 'function')
    problems.push('refreshLock must implement acquire(shop)');
  const fetchFn =
    input.fetch ?? (typeof globalThis.fetch === 'function' ? (((url, init) => globalThis.fetch(url, init)) as typeof fetch) : undefined);
  if (typeof fetchFn !== 'function') problems.push('fetch must be a function (no global fetch on this runtime)');
  if (input.clock !== undefined && typeof input.clock?.now !== 'function') problems.push('clock must have now()');
  for (const key of ['sleep', 'randomBytes', 'onReauthorizationRequired'] as const) {
    if (input[key] !== undefined && typeof input[key] !== 'function') problems.push(`${key} must be a function`);
  }
  const nonNegative = (key: keyof AppConfig, fallback: number, positive = false): number => {
    const v = raw[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0)) {
      problems.push(`${key} must be a ${positive ? 'positive' : 'non-negative'} number`);
      return fallback;
    }
    return v;
  };
  const timestampToleranceSeconds = nonNegative('timestampToleranceSeconds', 300);
  const keys = input.webhookPublicKeys as { keys?: unknown } | null | undefined;
  if (keys !== undefined && (typeof keys !== 'object' || keys === null || !(Array.isArray(keys.keys) || typeof keys.keys === 'function')))
    problems.push("webhookPublicKeys must be a JSON Web Key Set ({ keys: [...] }) or remoteJwks('<url>')");
  if (input.requireStandardWebhookSignature !== undefined && typeof input.requireStandardWebhookSignature !== 'boolean') {
    problems.push('requireStandardWebhookSignature must be a boolean');
  }
  const stateTtlSeconds = nonNegative('stateTtlSeconds', 600, true);
  const refreshMarginSeconds = nonNegative('refreshMarginSeconds', 60);
  const requestTimeoutMs = nonNegative('requestTimeoutMs', 30_000, true);
  for (const key of ['headerPrefix', 'signatureHeader', 'accessTokenHeader', 'stateCookieName'] as const) {
    const v = raw[key];
    if (v !== undefined && (typeof v !== 'string' || !/^[A-Za-z0-9_!#$%&'*+.^`|~-]+$/.test(v)))
      problems.push(`${key} must be a header/cookie token`);
  }
  const apiAuthentication = input.apiAuthentication ?? 'access-token';
  if (apiAuthentication !== 'access-token' && apiAuthentication !== 'bearer')
    problems.push('apiAuthentication must be "access-token" or "bearer"');
  else if (apiAuthentication === 'bearer' && input.accessTokenHeader !== undefined)
    problems.push('accessTokenHeader names the header of apiAuthentication "access-token"; leave it out with "bearer"');
  if (typeof input.accessTokenHeader === 'string' && input.accessTokenHeader.toLowerCase() === 'authorization')
    problems.push('accessTokenHeader cannot be Authorization (that header needs the Bearer scheme): set apiAuthentication: "bearer"');
  const retry = { ...DEFAULT_RETRY };
  if (input.retry !== undefined) {
    if (input.retry === null || typeof input.retry !== 'object') problems.push('retry must be an object');
    else {
      const entries: Array<[string, unknown]> = Object.entries(input.retry);
      for (const [key, value] of entries) {
        if (!(key in DEFAULT_RETRY)) problems.push(`unknown key "retry.${key}"`);
        else if (key === 'idempotencyKeys') {
          if (typeof value !== 'boolean') problems.push('retry.idempotencyKeys must be true or false');
          else retry.idempotencyKeys = value;
        } else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
          problems.push(`retry.${key} must be a non-negative number`);
        else retry[key as Exclude<keyof ResolvedRetryOptions, 'idempotencyKeys'>] = value;
      }
    }
  }
  let callLimit: CallLimitOptions | false = {};
  if (input.callLimit === false) callLimit = false;
  else if (input.callLimit !== undefined) {
    if (input.callLimit === null || typeof input.callLimit !== 'object') problems.push('callLimit must be an object or false');
    else {
      const entries: Array<[string, unknown]> = Object.entries(input.callLimit);
      for (const [key, value] of entries) {
        if (key !== 'leakPerSecond' && key !== 'reserve') problems.push(`unknown key "callLimit.${key}"`);
        else if (typeof value !== 'number' || !(value >= 0) || (key === 'leakPerSecond' && value === 0))
          problems.push(`callLimit.${key} must be a positive number`);
      }
      callLimit = input.callLimit;
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    clientId: input.clientId,
    clientSecrets,
    scopes,
    redirectUri: input.redirectUri,
    storeDomain,
    apiOrigin,
    apiVersion,
    pagination: input.pagination ?? paginationForVersion(apiVersion),
    sessionStorage,
    refreshLock: input.refreshLock,
    fetch: fetchFn as typeof fetch,
    clock: input.clock ?? { now: () => Date.now() },
    sleep: input.sleep ?? timerSleep,
    randomBytes: input.randomBytes ?? cryptoRandomBytes,
    logger: input.logger,
    headerPrefix: input.headerPrefix ?? 'X-Service-',
    signatureHeader: input.signatureHeader,
    accessTokenHeader: input.accessTokenHeader ?? 'Access-Token',
    apiAuthentication,
    timestampToleranceSeconds,
    requireStandardWebhookSignature: input.requireStandardWebhookSignature ?? false,
    webhookPublicKeys: input.webhookPublicKeys,
    stateTtlSeconds,
    stateCookieName: input.stateCookieName ?? 'storegate_state',
    refreshMarginSeconds,
    requestTimeoutMs,
    retry,
    callLimit,
    onReauthorizationRequired: input.onReauthorizationRequired,
  };
}

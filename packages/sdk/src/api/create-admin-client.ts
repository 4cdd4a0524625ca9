// An Admin API client without createApp: for private apps (created in a store's admin, they get one
// fixed token for the Access-Token header, with no OAuth and no expiry) and scripts that hold a
// token already.
import { DeprecationNotices, observingFetch } from './deprecation-notices.ts';
import { resolveConfig, DEFAULT_API_VERSION, paginationForVersion, type PaginationConvention } from '../config/app-config.ts';
import { cryptoRandomBytes, type RandomBytes } from '../crypto/random.ts';
import { redactingLogger, type Logger } from '../logging/redacting-logger.ts';
import { AdminClient } from './admin-client.ts';
import { CallLimitThrottle, type CallLimitOptions } from './call-limit.ts';
import { DEFAULT_RETRY, timerSleep, type RetryOptions, type Sleep } from './retry-policy.ts';

/** Options of {@link createAdminClient}. */
export interface AdminClientOptions {
  /** The shop hostname, e.g. `demo.localhost`. */
  shop: string;
  /** A fixed token (private app), or a function returning a valid one. */
  accessToken: string | ((signal?: AbortSignal) => Promise<string>);
  /** Origin of the shop's API, template with `{shop}` or function (default as in `createApp`). */
  apiOrigin?: string | ((shop: string) => string);
  storeDomain?: string;
  apiVersion?: string;
  pagination?: PaginationConvention;
  fetch?: typeof fetch;
  clock?: { now(): number };
  sleep?: Sleep;
  randomBytes?: RandomBytes;
  logger?: Logger;
  retry?: RetryOptions;
  callLimit?: CallLimitOptions | false;
  requestTimeoutMs?: number;
  headerPrefix?: string;
  accessTokenHeader?: string;
  /** `'bearer'` sends `Authorization: Bearer <token>` instead of the `Access-Token` header (default `'access-token'`). */
  apiAuthentication?: 'access-token' | 'bearer';
}

/**
 * An Admin API client for one shop and a token you already hold — a private app's fixed
 * Access-Token (it never expires) or a token kept elsewhere. Same retries, typed errors and
 * pagination as `app.client`.
 *
 * @example
 * ```ts
 * const client = createAdminClient({ shop: 'demo.localhost', accessToken: process.env.PRIVATE_TOKEN! });
 * const products = await client.paginate('products', { limit: 50 }).toArray({ max: 200 });
 * ```
 */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  // Reuse the app config validation for the shared settings.
  const c = resolveConfig({
    clientId: 'private-app',
    clientSecret: 'unused',
    scopes: 'read_products',
    redirectUri: 'http://localhost/',
    ...(options.storeDomain === undefined ? {} : { storeDomain: options.storeDomain }),
    ...(options.apiOrigin === undefined ? {} : { apiOrigin: options.apiOrigin }),
    ...(options.apiVersion === undefined ? {} : { apiVersion: options.apiVersion }),
    ...(options.pagination === undefined ? {} : { pagination: options.pagination }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
    ...(options.callLimit === undefined ? {} : { callLimit: options.callLimit }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.headerPrefix === undefined ? {} : { headerPrefix: options.headerPrefix }),
    ...(options.accessTokenHeader === undefined ? {} : { accessTokenHeader: options.accessTokenHeader }),
    ...(options.apiAuthentication === undefined ? {} : { apiAuthentication: options.apiAuthentication }),
  });
  const token = options.accessToken;
  const log = redactingLogger(options.logger, typeof token === 'string' ? [token] : []);
  const clock = options.clock;
  const now = clock ? () => clock.now() : () => Date.now();
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION;
  return new AdminClient({
    shop: options.shop,
    origin: c.apiOrigin(options.shop),
    apiVersion,
    pagination: options.pagination ?? paginationForVersion(apiVersion),
    fetch: observingFetch(c.fetch, log, new DeprecationNotices()),
    now,
    sleep: options.sleep ?? timerSleep,
    randomBytes: options.randomBytes ?? cryptoRandomBytes,
    log,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    throttle: c.callLimit === false ? undefined : new CallLimitThrottle(c.callLimit, now),
    timeoutMs: c.requestTimeoutMs,
    accessTokenHeader: c.accessTokenHeader,
    apiAuthentication: c.apiAuthentication,
    callLimitHeader: `${c.headerPrefix}Api-Call-Limit`,
    getAccessToken:
      typeof token === 'string'
        ? async () => token
        : async (signal) => {
            const t = await token(signal);
            log.addSecret(t);
            return t;
          },
  });
}

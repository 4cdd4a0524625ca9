// createApp: the configured app, from which everything else hangs (auth, tokens, clients, webhooks).
import { DeprecationNotices, observingFetch } from './api/deprecation-notices.ts';
import { AdminClient } from './api/admin-client.ts';
import { CallLimitThrottle } from './api/call-limit.ts';
import { resolveConfig, type AppConfig, type ResolvedConfig } from './config/app-config.ts';
import { bytesToBase64Url } from './crypto/encoding.ts';
import { AuthorizationDeniedError, NetworkError, ParameterError, ShopError, StateError, TokenExchangeError } from './errors.ts';
import { readRequestInput, type RequestLike, type RequestOrQuery } from './http/request-input.ts';
import { redactingLogger, type SdkLogger } from './logging/redacting-logger.ts';
import { postTokenRequest, type TokenFailure, type TokenGrant } from './oauth/token-endpoint.ts';
import { checkIssuer } from './oauth/issuer.ts';
import { requireLaunchParams } from './oauth/launch-request.ts';
import type { VerifiedLaunchToken } from './oauth/launch-token.ts';
import { exchangeLaunchToken, verifyAppLaunchToken, type TokenExchangeOptions } from './oauth/token-exchange.ts';
import { TokenManager, type AccessTokenOptions } from './oauth/token-manager.ts';
import { clearStateCookieHeader, readCookie, stateCookieHeader } from './oauth/state-cookie.ts';
import { bindingDigest, createState, requireSameBrowser, verifyState } from './oauth/state.ts';
import type { Session, SessionStorage } from './session/session.ts';
import { isValidShop } from './shop/shop-hostname.ts';
import { checkTimestamp, queryPairs, requireParam, verifyQuery, type QueryInput } from './signature/query-signature.ts';
import { verifyWebhook, type HeadersInput, type RawBody, type WebhookEvent } from './signature/webhook-signature.ts';

/** Options of `auth.begin`. */
export interface BeginOptions {
  shop: string;
  /** Scopes to ask for instead of the configured ones. */
  scopes?: string | readonly string[];
  /**
   * Ask for the merchant's online token (`grant_options[]=per-user`) instead of the shop's offline
   * pair: the callback then stores an online session (per user, never refreshed).
   */
  online?: boolean;
}

/** Options of `auth.begin` in signed-state mode: the state is bound to the app's session, not to a cookie. */
export interface BoundBeginOptions extends BeginOptions {
  /**
   * A value of the app's own session with the merchant's browser (such as its session id), which an
   * attacker cannot make another browser present. The callback must pass the same value.
   */
  binding: string;
}

/** What `auth.begin` returns in cookie mode. */
export interface BeginResult {
  /** The platform's authorization URL (`/admin/oauth/authorize?…`) to redirect the merchant's browser to. */
  url: string;
  /** The signed state in the URL. */
  state: string;
  /** The `Set-Cookie` header value binding the state to this browser; the callback refuses to go on without it. */
  cookie: string;
  cookieName: string;
}

/** What `auth.begin` returns in signed-state mode: no cookie to set. */
export interface BoundBeginResult {
  url: string;
  /** The signed state in the URL; it carries a keyed digest of the binding. */
  state: string;
}

/** Options of `auth.callback`. */
export interface CallbackOptions {
  /** The state cookie: its value, or the whole `Cookie` header. Read from the request when one is passed. */
  stateCookie?: string | undefined;
  /** The app-session value passed to `auth.begin` as `binding` (signed-state mode). */
  binding?: string | undefined;
}

/**
 * A verified App-URL request: the signed GET (shop, timestamp, hmac, and when an installed app is opened id_token) the platform sends to
 * the app's URL when a merchant clicks Install or Open in the store admin.
 */
export interface InstallRequest {
  shop: string;
  timestamp: number;
  /**
   * The launch token, when the request carries one: covered by the hmac, but not verified as a
   * token here (it lives 60 s, so a reload must not break the OAuth path); `auth.tokenExchange`
   * and `verifyLaunchToken` verify it.
   */
  idToken: string | undefined;
  /** Every verified parameter except `hmac`. */
  params: Record<string, string>;
}

/** Which session of a shop: its offline one (default), or the online one of a merchant. */
export interface SessionSelector {
  /** The merchant (`sub` of the launch token, `associatedUser.id`) whose online session to use. */
  userId?: string | undefined;
}

/** A webhook to verify: the raw body and headers, or a web `Request` (its body is read here). */
export type WebhookInput = { rawBody: RawBody; headers: HeadersInput } | Request;

/**
 * The app returned by {@link createApp}.
 *
 * @example
 * ```ts
 * const { url, cookie } = await app.auth.begin({ shop: 'demo.localhost' });
 * const session = await app.auth.callback(request);            // after the platform redirects back
 * const { shop, idToken } = await app.verifyInstallRequest(request); // App-URL request
 * const offline = await app.auth.tokenExchange({ idToken, shop });   // managed install: no redirect
 * const event = await app.verifyWebhook({ rawBody, headers });
 * const token = await app.getAccessToken(shop);
 * const products = await app.client(shop).paginate('products').toArray({ max: 100 });
 * ```
 */
export interface StoregateApp {
  /** The validated settings (secrets left out). */
  readonly settings: Readonly<{
    clientId: string;
    scopes: readonly string[];
    redirectUri: string;
    storeDomain: string;
    apiVersion: string;
    headerPrefix: string;
    signatureHeader: string | undefined;
    stateCookieName: string;
    apiAuthentication: 'access-token' | 'bearer';
  }>;
  /** The OAuth install flow. */
  readonly auth: {
    /** Cookie mode: set the returned `cookie` on the redirect. */
    begin(options: BeginOptions & { binding?: undefined }): Promise<BeginResult>;
    /** Signed-state mode: no cookie; pass the same `binding` to `callback`. */
    begin(options: BoundBeginOptions): Promise<BoundBeginResult>;
    /** Refuses a callback that does not come from the browser that began it (see `begin`), before the code is exchanged. */
    callback(request: RequestOrQuery, options?: CallbackOptions): Promise<Session>;
    /** `Set-Cookie` value that removes the state cookie after the callback. */
    clearStateCookie(): string;
    /**
     * Managed install: verifies the launch token, exchanges it at the store's token endpoint for the
     * shop's offline token (or with `online: true` the merchant's online token), stores the session
     * and returns it. No redirect. Throws `LaunchTokenError` before anything is sent for a token
     * that does not verify, `TokenExchangeError` when the platform refuses it.
     */
    tokenExchange(options: TokenExchangeOptions): Promise<Session>;
  };
  /**
   * Verifies the App-URL request (shop, timestamp, hmac, optional id_token). Any other parameter,
   * or one of these twice, is refused with `ParameterError` (`PARAMETER_UNEXPECTED`, `PARAMETER_INVALID`).
   */
  verifyInstallRequest(request: RequestOrQuery): Promise<InstallRequest>;
  /**
   * Verifies a launch token (`id_token`): HS256 only, signed with the client secret (current or
   * previous), for this app, from a store of the configured domain reached at the configured API
   * origin, within its validity (5 s of skew). Throws `LaunchTokenError`.
   */
  verifyLaunchToken(idToken: string): Promise<VerifiedLaunchToken>;
  /** Verifies a webhook with the app's secrets, header names and clock. */
  verifyWebhook<T = unknown>(input: WebhookInput): Promise<WebhookEvent<T>>;
  /**
   * A valid access token for the shop, refreshed ahead of expiry; with `userId`, that merchant's
   * online token (never refreshed: `SessionExpiredError` once it expires).
   */
  getAccessToken(shop: string, options?: AccessTokenOptions): Promise<string>;
  /**
   * The stored session: the shop's offline one, or with `userId` the merchant's online one, which
   * reads as `undefined` once expired (or within the refresh margin of it).
   */
  getSession(shop: string, options?: SessionSelector): Promise<Session | undefined>;
  /** The Admin API client of a shop; with `userId`, acting with that merchant's online token. */
  client(shop: string, options?: SessionSelector): AdminClient;
  /** Same as {@link StoregateApp.client}. */
  api(shop: string, options?: SessionSelector): AdminClient;
  /** Whether `shop` is a shop hostname of the configured store domain. */
  isValidShop(shop: string): boolean;
  /** The session storage in use. */
  readonly sessions: SessionStorage;
}

function isWebRequest(input: WebhookInput): input is Request {
  return typeof (input as Request).arrayBuffer === 'function' && typeof (input as Request).method === 'string';
}

/**
 * Creates the app from one validated config (throws `ConfigError` naming every unknown key,
 * missing or bad value).
 *
 * @example
 * ```ts
 * const app = createApp({
 *   clientId: process.env.CLIENT_ID!,
 *   clientSecret: process.env.CLIENT_SECRET!,
 *   scopes: ['read_products'],
 *   redirectUri: 'http://localhost:3000/auth/callback',
 *   storeDomain: 'localhost',
 *   apiOrigin: (shop) => `http://${shop}:8080`,
 * });
 * const { url, cookie } = await app.auth.begin({ shop: 'demo.localhost' });
 * // later, in the callback route:
 * const session = await app.auth.callback(request);
 * for await (const p of app.client(session.shop).paginate('products')) console.log(p);
 * ```
 */
export function createApp(config: AppConfig): StoregateApp {
  const c: ResolvedConfig = resolveConfig(config);
  const log: SdkLogger = redactingLogger(c.logger, c.clientSecrets);
  const tokens = new TokenManager(c, log);
  // One set for the app: a route is warned about once, whichever shop's client called it.
  const apiFetch = observingFetch(c.fetch, log, new DeprecationNotices());
  const throttle = c.callLimit === false ? undefined : new CallLimitThrottle(c.callLimit, () => c.clock.now());
  const now = () => c.clock.now();
  const secure = c.redirectUri.startsWith('https://');

  // Parameters that are part of the registered redirect URI itself (`/cb?x=1`) arrive unsigned
  // next to the platform's signed ones; they are static, so they are left out of the hmac check.
  const redirectOwnParams = new Map(new URL(c.redirectUri).searchParams);
  const withoutRedirectOwnParams = (query: QueryInput): URLSearchParams =>
    new URLSearchParams(queryPairs(query).filter(([name, value]) => redirectOwnParams.get(name) !== value));

  const requireShop = (shop: string): string => {
    if (!isValidShop(shop, c.storeDomain)) throw new ShopError(String(shop), c.storeDomain);
    return shop;
  };

  async function begin(options: BeginOptions & { binding?: undefined }): Promise<BeginResult>;
  async function begin(options: BoundBeginOptions): Promise<BoundBeginResult>;
  async function begin(options: BeginOptions & { binding?: string | undefined }): Promise<BeginResult | BoundBeginResult> {
    const shop = requireShop(options.shop);
    const bound = options.binding !== undefined;
    if (bound && (typeof options.binding !== 'string' || options.binding === ''))
      throw new ParameterError('PARAMETER_INVALID', 'binding', 'binding must be a non-empty value of the app session');
    const secret = c.clientSecrets[0] as string;
    const nonce = bytesToBase64Url(c.randomBytes(18));
    const expiresAt = Math.floor(now() / 1000) + c.stateTtlSeconds;
    const binding = options.binding === undefined ? undefined : await bindingDigest(options.binding, secret);
    const state = await createState({ nonce, shop, expiresAt, binding }, secret);
    const scopes =
      options.scopes === undefined
        ? c.scopes
        : typeof options.scopes === 'string'
          ? options.scopes.split(/[\s,]+/).filter(Boolean)
          : options.scopes;
    const query = new URLSearchParams({
      client_id: c.clientId,
      scope: scopes.join(' '),
      redirect_uri: c.redirectUri,
      response_type: 'code',
      state,
    });
    if (options.online === true) query.append('grant_options[]', 'per-user');
    log.info('authorization started', { shop, bound, online: options.online === true });
    const url = `${c.apiOrigin(shop)}/admin/oauth/authorize?${query.toString()}`;
    if (bound) return { url, state };
    return {
      url,
      state,
      cookie: stateCookieHeader(c.stateCookieName, nonce, { secure, maxAgeSeconds: c.stateTtlSeconds }),
      cookieName: c.stateCookieName,
    };
  }

  async function callback(request: RequestOrQuery, options: CallbackOptions = {}): Promise<Session> {
    const { query, cookieHeader } = readRequestInput(request);
    const params: Record<string, string> = {};
    for (const [name, value] of queryPairs(query)) params[name] = name in params ? `${params[name]},${value}` : value;
    try {
      // The order decides which error a bad callback gets: the state and the proof that this browser
      // started this authorization first (so even an error redirect must carry them), then the
      // issuer when it is named (it must be the shop the state was issued for), then the hmac
      // (nothing else in the query is trusted before it), then the shop; the timestamp only when sent.
      const state = await verifyState(params['state'], c.clientSecrets, now());
      const cookieSource = options.stateCookie ?? cookieHeader;
      const cookieNonce = cookieSource?.includes('=') ? readCookie(cookieSource, c.stateCookieName) : cookieSource;
      await requireSameBrowser(state, { cookieNonce, binding: options.binding }, c.clientSecrets);
      // The issuer before the error or the code: a response from another issuer is not ours to read.
      checkIssuer(params, c.apiOrigin(state.shop));
      if (params['error'] !== undefined) throw new AuthorizationDeniedError(params['error'], params['error_description']);
      await verifyQuery(redirectOwnParams.size === 0 ? query : withoutRedirectOwnParams(query), c.clientSecrets);
      const shop = requireParam(params, 'shop');
      if (!isValidShop(shop, c.storeDomain)) throw new ShopError(shop, c.storeDomain);
      if (shop !== state.shop)
        throw new StateError('STATE_MISMATCH', `the state was issued for ${state.shop}, the callback is for ${shop}`);
      if (params['timestamp'] !== undefined) checkTimestamp(params['timestamp'], c.timestampToleranceSeconds, now);
      const code = requireParam(params, 'code');
      log.addSecret(code);
      let result: TokenGrant | TokenFailure;
      try {
        // Never retried: a code is single-use, and a replay revokes what it issued.
        result = await postTokenRequest(c, shop, { grant_type: 'authorization_code', code });
      } catch (error) {
        if (error instanceof NetworkError)
          throw new TokenExchangeError(`code exchange with ${shop} got no answer: ${error.message}`, { cause: error });
        throw error;
      }
      if (!result.ok) {
        throw new TokenExchangeError(
          `code exchange with ${shop} failed with ${result.status}${result.oauthError ? ` ${result.oauthError}` : ''}` +
            `${result.description ? `: ${result.description}` : ''}`,
          { status: result.status, oauthError: result.oauthError },
        );
      }
      const session = result.session;
      log.addSecret(session.accessToken);
      log.addSecret(session.refreshToken);
      await c.sessionStorage.set(session);
      log.info('app installed; session stored', {
        shop,
        online: session.online === true,
        scope: session.scope,
        expiresAt: session.expiresAt,
      });
      return session;
    } catch (error) {
      log.warn('authorization callback refused', { code: (error as { code?: string }).code, message: (error as Error).message });
      throw error;
    }
  }

  async function verifyInstallRequest(request: RequestOrQuery): Promise<InstallRequest> {
    const { query } = readRequestInput(request);
    requireLaunchParams(queryPairs(query));
    const params = await verifyQuery(query, c.clientSecrets, { timestampToleranceSeconds: c.timestampToleranceSeconds, now });
    const shop = requireParam(params, 'shop');
    if (!isValidShop(shop, c.storeDomain)) throw new ShopError(shop, c.storeDomain);
    return { shop, timestamp: Number(params['timestamp']), idToken: params['id_token'], params };
  }

  async function verifyAppWebhook<T>(input: WebhookInput): Promise<WebhookEvent<T>> {
    const { rawBody, headers } = isWebRequest(input)
      ? { rawBody: new Uint8Array(await input.arrayBuffer()), headers: input.headers }
      : input;
    return verifyWebhook<T>({
      rawBody,
      headers,
      secret: c.clientSecrets,
      toleranceSeconds: c.timestampToleranceSeconds,
      now,
      headerPrefix: c.headerPrefix,
      requireStandardSignature: c.requireStandardWebhookSignature,
      ...(c.webhookPublicKeys === undefined ? {} : { publicKeys: c.webhookPublicKeys }),
      ...(c.signatureHeader === undefined ? {} : { signatureHeader: c.signatureHeader }),
    });
  }

  function client(shop: string, options: SessionSelector = {}): AdminClient {
    requireShop(shop);
    const userId = options.userId;
    return new AdminClient({
      shop,
      origin: c.apiOrigin(shop),
      apiVersion: c.apiVersion,
      pagination: c.pagination,
      fetch: apiFetch,
      now,
      sleep: c.sleep,
      randomBytes: c.randomBytes,
      log,
      retry: c.retry,
      throttle,
      timeoutMs: c.requestTimeoutMs,
      accessTokenHeader: c.accessTokenHeader,
      callLimitHeader: `${c.headerPrefix}Api-Call-Limit`,
      apiAuthentication: c.apiAuthentication,
      getAccessToken: (signal) => tokens.getAccessToken(shop, { signal, userId }),
      // An online token is never refreshed: a 401 on it is final (exchange a new launch token).
      ...(userId === undefined
        ? {
            refreshAfterUnauthorized: (rejected: string, signal?: AbortSignal) =>
              tokens.refreshAfterUnauthorized(shop, rejected, { signal }),
          }
        : {}),
    });
  }

  return {
    settings: Object.freeze({
      clientId: c.clientId,
      scopes: c.scopes,
      redirectUri: c.redirectUri,
      storeDomain: c.storeDomain,
      apiVersion: c.apiVersion,
      headerPrefix: c.headerPrefix,
      signatureHeader: c.signatureHeader,
      stateCookieName: c.stateCookieName,
      apiAuthentication: c.apiAuthentication,
    }),
    auth: {
      begin,
      callback,
      clearStateCookie: () => clearStateCookieHeader(c.stateCookieName, secure),
      tokenExchange: (options) => exchangeLaunchToken(c, log, options),
    },
    verifyInstallRequest,
    verifyLaunchToken: (idToken) => verifyAppLaunchToken(c, log, idToken),
    verifyWebhook: verifyAppWebhook,
    getAccessToken: (shop, options) => tokens.getAccessToken(shop, options),
    getSession: (shop, options = {}) =>
      options.userId === undefined ? c.sessionStorage.get(requireShop(shop)) : tokens.onlineSession(requireShop(shop), options.userId),
    client,
    api: client,
    isValidShop: (shop) => isValidShop(shop, c.storeDomain),
    sessions: c.sessionStorage,
  };
}

export type { RequestLike };

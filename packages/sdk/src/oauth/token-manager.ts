// Access tokens that expire and are renewed with the refresh token: refresh ahead of expiry, one
// refresh per shop at a time in this process, an optional lock across processes, the new pair saved
// (compare-and-set) before it is handed out, `invalid_grant` turned into "re-authorisation needed".
// A merchant's online token is never refreshed: it has no refresh token by design, and once it
// expires the app exchanges a new launch token instead.
import type { ResolvedConfig } from '../config/app-config.ts';
import {
  AbortedError,
  NetworkError,
  ReauthorizationRequiredError,
  SessionExpiredError,
  SessionNotFoundError,
  TokenRefreshError,
} from '../errors.ts';
import type { SdkLogger } from '../logging/redacting-logger.ts';
import { onlineSessionId, type Session } from '../session/session.ts';
import { postTokenRequestWithRetries } from './token-endpoint.ts';

/** Options of one token request. */
export interface AccessTokenOptions {
  signal?: AbortSignal;
  /**
   * The merchant whose online token to use (the `sub` of their launch token, `associatedUser.id`)
   * instead of the shop's offline token. Online tokens are never refreshed: an absent, expired (or
   * expiring within the refresh margin) one throws `SessionExpiredError`.
   */
  userId?: string | undefined;
}

/**
 * Gives out valid access tokens per shop, refreshing them when needed. `createApp` builds one;
 * use it directly only with a resolved config.
 *
 * @example
 * ```ts
 * const tokens = new TokenManager(resolveConfig(config), redactingLogger(console));
 * const token = await tokens.getAccessToken('demo.localhost');
 * ```
 */
export class TokenManager {
  readonly #config: ResolvedConfig;
  readonly #log: SdkLogger;
  readonly #inflight = new Map<string, Promise<string>>();

  constructor(config: ResolvedConfig, log: SdkLogger) {
    this.#config = config;
    this.#log = log;
  }

  #needsRefresh(session: Session): boolean {
    if (session.expiresAt === null || session.expiresAt === undefined) return false;
    return this.#config.clock.now() / 1000 >= session.expiresAt - this.#config.refreshMarginSeconds;
  }

  #expired(session: Session): boolean {
    return session.expiresAt !== null && session.expiresAt !== undefined && this.#config.clock.now() / 1000 >= session.expiresAt;
  }

  async #load(shop: string): Promise<Session> {
    const session = await this.#config.sessionStorage.get(shop);
    if (!session) throw new SessionNotFoundError(shop);
    if (session.reauthorizationRequired) throw new ReauthorizationRequiredError(shop, 'an earlier refresh was refused');
    this.#log.addSecret(session.accessToken);
    this.#log.addSecret(session.refreshToken);
    return session;
  }

  /**
   * The online session of a merchant while it is still usable, `undefined` when absent or expired
   * (or expiring within the refresh margin, when a shop's offline token would be refreshed).
   *
   * @example
   * ```ts
   * const session = await tokens.onlineSession('demo.localhost', '1'); // undefined: exchange a launch token
   * ```
   */
  async onlineSession(shop: string, userId: string): Promise<Session | undefined> {
    const session = await this.#config.sessionStorage.get(onlineSessionId(shop, userId));
    if (!session?.online || session.shop !== shop || session.associatedUser?.id !== userId) return undefined;
    if (session.expiresAt === null || session.expiresAt === undefined || this.#needsRefresh(session)) return undefined;
    this.#log.addSecret(session.accessToken);
    return session;
  }

  /**
   * A valid access token for `shop`, refreshed first when it expires within the margin.
   *
   * @example
   * ```ts
   * const token = await app.getAccessToken('demo.localhost'); // same as the TokenManager inside the app
   * ```
   */
  async getAccessToken(shop: string, options: AccessTokenOptions = {}): Promise<string> {
    if (options.userId !== undefined) {
      const online = await this.onlineSession(shop, options.userId);
      if (!online) throw new SessionExpiredError(shop, options.userId, 'is absent or expired');
      return online.accessToken;
    }
    const session = await this.#load(shop);
    if (!this.#needsRefresh(session)) return session.accessToken;
    return this.#refreshOnce(shop, session.accessToken, false, options.signal);
  }

  /**
   * Refreshes after the API refused `rejectedToken` (401), unless another caller already replaced
   * it; returns the token to retry with. The Admin API client calls this on its own.
   *
   * @example
   * ```ts
   * const fresh = await tokens.refreshAfterUnauthorized('demo.localhost', rejectedToken);
   * ```
   */
  async refreshAfterUnauthorized(shop: string, rejectedToken: string, options: AccessTokenOptions = {}): Promise<string> {
    return this.#refreshOnce(shop, rejectedToken, true, options.signal);
  }

  #refreshOnce(shop: string, staleToken: string, force: boolean, signal: AbortSignal | undefined): Promise<string> {
    let running = this.#inflight.get(shop);
    if (!running) {
      // The refresh is shared by every waiting caller, so no single caller's signal may cancel it
      // (it is bounded by the request timeout and the retries); a caller that aborts stops waiting.
      running = this.#refreshLocked(shop, staleToken, force).finally(() => this.#inflight.delete(shop));
      this.#inflight.set(shop, running);
    }
    return signal ? abortable(running, signal) : running;
  }

  async #refreshLocked(shop: string, staleToken: string, force: boolean): Promise<string> {
    const release = this.#config.refreshLock ? await this.#config.refreshLock.acquire(shop) : undefined;
    try {
      // Re-read under the lock: another process may have refreshed meanwhile.
      const current = await this.#load(shop);
      if (current.online) {
        // Stored under the shop's key by a storage that predates online sessions: still never refreshed.
        throw new SessionExpiredError(shop, current.associatedUser?.id ?? 'unknown', 'cannot be refreshed (online tokens never are)');
      }
      if (current.accessToken !== staleToken && !this.#needsRefresh(current)) return current.accessToken;
      if (!force && !this.#needsRefresh(current)) return current.accessToken;
      if (!current.refreshToken) {
        if (!force && !this.#expired(current)) return current.accessToken;
        throw await this.#requireReauthorization(current, 'the session has no refresh token');
      }
      return await this.#refresh(current, current.refreshToken);
    } finally {
      if (release) await release();
    }
  }

  async #refresh(current: Session, refreshToken: string): Promise<string> {
    const { shop } = current;
    let result: Awaited<ReturnType<typeof postTokenRequestWithRetries>>;
    try {
      result = await postTokenRequestWithRetries(
        this.#config,
        this.#log,
        shop,
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        'token refresh',
      );
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      throw new TokenRefreshError(
        `refreshing the token of ${shop} failed after ${this.#config.retry.maxRetries + 1} attempts (network); the stored refresh token ` +
          `was kept`,
        { cause: error },
      );
    }
    if (result.ok) {
      // Only the token fields are taken from the answer: the session stays the shop's offline one.
      const next: Session = {
        ...current,
        id: current.id ?? shop,
        accessToken: result.session.accessToken,
        expiresAt: result.session.expiresAt,
        scope: result.session.scope,
        refreshToken: result.session.refreshToken ?? refreshToken,
        storeId: result.session.storeId ?? current.storeId,
        storeName: result.session.storeName ?? current.storeName,
        reauthorizationRequired: false,
      };
      this.#log.addSecret(next.accessToken);
      this.#log.addSecret(next.refreshToken);
      // Saved before it is returned: a crash after this line loses nothing.
      const saved = await this.#config.sessionStorage.compareAndSet(shop, refreshToken, next);
      if (!saved) {
        const latest = await this.#load(shop);
        this.#log.warn('another writer stored a newer session during the refresh; using it', { shop });
        return latest.accessToken;
      }
      this.#log.info('access token refreshed', { shop, expiresAt: next.expiresAt });
      return next.accessToken;
    }
    if (result.oauthError === 'invalid_grant') {
      throw await this.#requireReauthorization(
        current,
        `the platform refused the refresh token (invalid_grant${result.description ? `: ${result.description}` : ''})`,
      );
    }
    throw new TokenRefreshError(
      `refreshing the token of ${shop} failed with ${result.status}${result.oauthError ? ` ${result.oauthError}` : ''}; the stored ` +
        `refresh token was kept`,
      { status: result.status, oauthError: result.oauthError },
    );
  }

  async #requireReauthorization(session: Session, reason: string): Promise<ReauthorizationRequiredError> {
    const error = new ReauthorizationRequiredError(session.shop, reason);
    try {
      await this.#config.sessionStorage.compareAndSet(session.shop, session.refreshToken ?? null, {
        ...session,
        reauthorizationRequired: true,
      });
    } catch (cause) {
      this.#log.error('could not mark the session as needing re-authorisation', { shop: session.shop, error: cause });
    }
    this.#log.warn('re-authorisation required', { shop: session.shop, reason });
    try {
      await this.#config.onReauthorizationRequired?.({ shop: session.shop, error });
    } catch (cause) {
      this.#log.error('onReauthorizationRequired hook threw', { shop: session.shop, error: cause });
    }
    return error;
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new AbortedError({ cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError({ cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

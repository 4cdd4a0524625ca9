// Managed install: the platform installs the app for the merchant and opens the App URL with a
// signed launch (shop, timestamp, hmac, id_token). The app verifies it and trades the launch token
// for tokens at the store's token endpoint (token exchange), with no OAuth redirect of its own.
// A launch token is exchanged once, so a launch yields one token: the shop's offline pair when the
// app holds none (the first launch after the install) or when the one it holds was revoked, else the
// merchant's online token, which the pages use to say who is signed in.
import { onlineSessionId, ReauthorizationRequiredError, TokenExchangeError, type AssociatedUser, type StoregateApp } from '@storegate/app';

/** What one verified launch gave the app. */
export interface ManagedLaunch {
  shop: string;
  /** True when this launch installed the app (its offline token was exchanged now). */
  installed: boolean;
  /** The merchant who opened the app, when their online session is known. */
  user: AssociatedUser | undefined;
}

/** A launch without a launch token: the platform did not install the app itself. */
export class MissingLaunchTokenError extends Error {
  readonly shop: string;
  constructor(shop: string) {
    super(
      `The platform opened the app for ${shop} without a launch token (id_token), so the app cannot exchange one. ` +
        'Install it from the store admin with managed install, or start the app without STOREGATE_MANAGED_INSTALL to use OAuth.',
    );
    this.name = 'MissingLaunchTokenError';
    this.shop = shop;
  }
}

export class ManagedLaunches {
  readonly #app: StoregateApp;
  readonly #afterInstall: (shop: string) => Promise<void>;
  readonly #onOnlineRefused: (shop: string, error: TokenExchangeError) => void;
  // Online sessions this process stored, per shop, so an uninstall can forget them too.
  readonly #online = new Map<string, Set<string>>();

  constructor(
    app: StoregateApp,
    afterInstall: (shop: string) => Promise<void>,
    onOnlineRefused: (shop: string, error: TokenExchangeError) => void = () => {},
  ) {
    this.#app = app;
    this.#afterInstall = afterInstall;
    this.#onOnlineRefused = onOnlineRefused;
  }

  /**
   * Verifies the launch, makes sure the app holds the shop's offline token (exchanging the launch
   * token for it when it holds none), runs `load` with it, then exchanges the launch token for the
   * merchant's online token when it is still unused.
   */
  async open<T>(
    request: { url: string; headers: Record<string, string | string[] | undefined> },
    load: (shop: string) => Promise<T>,
  ): Promise<{ launch: ManagedLaunch; result: T }> {
    const app = this.#app;
    const { shop, idToken } = await app.verifyInstallRequest(request);
    if (idToken === undefined) throw new MissingLaunchTokenError(shop);
    // Verified before anything else is done with it: who opened the app, and that the token is good.
    const { userId } = await app.verifyLaunchToken(idToken);
    const install = async () => {
      await app.auth.tokenExchange({ idToken, shop });
      await this.#afterInstall(shop);
    };
    const offline = await app.getSession(shop);
    if (!offline || offline.reauthorizationRequired) {
      await install();
      return { launch: { shop, installed: true, user: undefined }, result: await load(shop) };
    }
    let result: T;
    try {
      result = await load(shop);
    } catch (error) {
      // The stored token was revoked (the app was uninstalled and installed again while it missed
      // the app/uninstalled webhook): this launch's token is still unused, so it installs again.
      if (!(error instanceof ReauthorizationRequiredError)) throw error;
      await install();
      return { launch: { shop, installed: true, user: undefined }, result: await load(shop) };
    }
    let online = await app.getSession(shop, { userId });
    if (!online) {
      try {
        online = await app.auth.tokenExchange({ idToken, shop, online: true });
      } catch (error) {
        // The page does not depend on it: without an online token it only cannot say who opened it.
        if (!(error instanceof TokenExchangeError)) throw error;
        this.#onOnlineRefused(shop, error);
        return { launch: { shop, installed: false, user: undefined }, result };
      }
    }
    let ids = this.#online.get(shop);
    if (!ids) this.#online.set(shop, (ids = new Set()));
    ids.add(userId);
    return { launch: { shop, installed: false, user: online.associatedUser }, result };
  }

  /** Forgets the online sessions of `shop` this process stored (the platform revoked them at the uninstall). */
  async forget(shop: string): Promise<void> {
    for (const userId of this.#online.get(shop) ?? []) await this.#app.sessions.delete(onlineSessionId(shop, userId));
    this.#online.delete(shop);
  }
}

// Partner apps (client credentials), installations (grants) and private apps.
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import type { AppProfile } from '../domain/app-profile.ts';
import type { Clock } from '../domain/clock.ts';
import { storeHostname } from '../domain/store-host.ts';
import { formatScopes, parseScopes, type Scope } from '../domain/scopes.ts';
import { hashToken, newToken } from '../domain/tokens.ts';
import { NotFoundError, ScopeParseError, ValidationFailedError } from '../domain/errors.ts';
import { MAX_ACTIVE_PRIVATE_APPS } from '../domain/limits.ts';
import { SCOPE_LOST, unreadableTopics } from '../domain/webhook-topics.ts';
import type { Repositories } from '../storage/ports/repositories.ts';
import type { InstallationRow, InstalledApp, PrivateAppSummary } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';
import { checkAppUrl, checkPrivateApp } from './app-checks.ts';
import { profileOf, type SealedAppSecrets, sealedSecretsOf } from './app-secrets.ts';
import { copiesOnGrant, copiesOnUninstall } from './app-webhook-copies.ts';
import { ClientAuth, type ClientCheck, type GrantRequest } from './client-auth.ts';
import { checkPrivacyWebhookUrl, privacyUrlProblem } from './privacy-address.ts';
import type { Sealer } from './master-keys.ts';
import type { WebhookOutbox } from './webhook-outbox.ts';

export type { InstallationRow };

export { checkAppUrl, checkPrivateApp };

const MANAGED_NEEDS_SCOPES = 'an app the platform installs must declare the scopes it needs';

export class AppService {
  private readonly clients: ClientAuth;

  constructor(
    private readonly storage: Storage,
    private readonly box: Sealer,
    private readonly config: Pick<Config, 'mode' | 'storeDomain' | 'shopRedactDelayMs'>,
    private readonly clock: Clock,
    private readonly outbox: WebhookOutbox,
  ) {
    this.clients = new ClientAuth(box, clock);
  }

  /**
   * Uninstalls an app from a store, in one transaction: the installation ends, every token of it
   * is revoked, every code not yet redeemed ends, its queued webhooks are cancelled and
   * `app/uninstalled` is enqueued for the app's subscriptions to that topic. `shop/redact` is
   * written too, due after the configured delay, when the app has a privacy webhook address (a
   * reinstall before then cancels it). Nothing else reaches the app afterwards. The store copies of
   * its app-level subscriptions go too, but for those to `app/uninstalled`, which carry that event.
   */
  async uninstall(storeId: number, appId: number): Promise<void> {
    const now = this.clock();
    await this.storage.transaction(async (tx) => {
      const installation = await tx.apps.findInstallation(storeId, appId);
      const [store, app] = await Promise.all([this.storeName(tx, storeId), tx.apps.findById(appId)]);
      if (!installation || installation.uninstalled_at !== null || !app) throw new NotFoundError('The app is not installed in this store');
      // Codes first: a redemption that has claimed a code but not committed holds its row, so this
      // waits for it, and the revocation below then sees the family it issued.
      await tx.tokens.expireCodes(storeId, installation.id, now);
      await tx.apps.updateInstallation(storeId, installation.id, { uninstalledAt: now });
      await tx.tokens.revokeInstallation(storeId, installation.id, now);
      await tx.webhooks.cancelPending(storeId, appId, 'the app was uninstalled', now);
      await copiesOnUninstall(tx, storeId, appId);
      await this.outbox.enqueue(tx, {
        storeId,
        topic: 'app/uninstalled',
        uninstalledAppId: appId,
        payload: {
          id: String(storeId),
          name: store,
          domain: storeHostname(store, this.config.storeDomain),
          client_id: app.client_id,
          uninstalled_at: new Date(now).toISOString(),
        },
      });
      if (app.privacy_webhook_url) {
        await this.outbox.enqueueToApps(tx, {
          storeId,
          topic: 'shop/redact',
          appIds: [appId],
          delayMs: this.config.shopRedactDelayMs,
          payload: { shop_id: String(storeId), shop_domain: storeHostname(store, this.config.storeDomain) },
        });
      }
    });
  }

  private async storeName(tx: Repositories, storeId: number): Promise<string> {
    const name = await tx.accounts.findStoreNameById(storeId);
    if (name === undefined) throw new NotFoundError('No such store');
    return name;
  }

  /** A new app's fields, checked: field → messages (empty when valid). */
  checkApp(input: { name: string; appUrl: string; redirectUri: string; scopes?: string; privacyWebhookUrl?: string }): {
    errors: Record<string, string[]>;
    name: string;
    scopes: Scope[];
  } {
    const errors: Record<string, string[]> = {};
    const name = input.name?.trim() ?? '';
    if (name.length < 1 || name.length > 100) errors.name = ['must be 1 to 100 characters'];
    Object.assign(errors, this.urlErrors(input.appUrl, input.redirectUri));
    const privacy = input.privacyWebhookUrl ? checkPrivacyWebhookUrl(input.privacyWebhookUrl, this.config.mode) : undefined;
    if (privacy) errors.privacy_webhook_url = [privacy];
    let scopes: Scope[] = [];
    try {
      scopes = parseScopes(input.scopes ?? '');
    } catch (err) {
      if (!(err instanceof ScopeParseError)) throw err;
      errors.scopes = [err.message];
    }
    return { errors, name, scopes };
  }

  async createApp(input: {
    name: string;
    appUrl: string;
    redirectUri: string;
    scopes?: string;
    partnerId?: number | null;
    privacyWebhookUrl?: string;
    /** Whether the redirect with the code carries `iss` (on unless turned off). */
    authorizationIss?: boolean;
    /** Whether the platform runs consent for `scopes` and opens the app with a launch token. */
    managedInstall?: boolean;
  }): Promise<{ app: AppProfile; clientSecret: string }> {
    const { errors, name, scopes } = this.checkApp(input);
    if (!errors.privacy_webhook_url && input.privacyWebhookUrl) {
      const problem = await privacyUrlProblem(input.privacyWebhookUrl, this.config.mode);
      if (problem) errors.privacy_webhook_url = [problem];
    }
    if (input.managedInstall && scopes.length === 0) errors.scopes = [MANAGED_NEEDS_SCOPES];
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const clientId = randomBytes(16).toString('hex');
    const clientSecret = newToken('clientSecret');
    const app = await this.storage.apps.insertApp({
      client_id: clientId,
      partner_id: input.partnerId ?? null,
      name,
      app_url: input.appUrl,
      redirect_uri: input.redirectUri,
      scopes: formatScopes(scopes),
      client_secret_enc: await this.box.seal(clientSecret),
      created_at: this.clock(),
      privacy_webhook_url: input.privacyWebhookUrl || null,
      authorization_iss: input.authorizationIss === false ? 0 : 1,
      managed_install: input.managedInstall ? 1 : 0,
    });
    return { app: profileOf(app), clientSecret };
  }

  /** Whether the platform installs the app (consent for its declared scopes, then a launch token): needs scopes. */
  async setManagedInstall(appId: number, on: boolean): Promise<void> {
    if (on) {
      const app = await this.storage.apps.findById(appId);
      if (!app) throw new NotFoundError('No app with this client id');
      if (app.scopes === '') throw new ValidationFailedError({ managed_install: [MANAGED_NEEDS_SCOPES] });
    }
    await this.storage.apps.updateManagedInstall(appId, on);
  }

  /** Whether every app's redirect with the code carries `iss`: what the authorization server metadata may promise. */
  async issToEveryApp(): Promise<boolean> {
    return !(await this.storage.apps.anyWithoutIss());
  }

  /**
   * Sets the app's privacy webhook address (an empty value clears it: the app then gets no privacy
   * topic), under the rules of subscription addresses. Deliveries already queued go to the
   * address as it is when they are sent.
   */
  async setPrivacyWebhookUrl(appId: number, value: string): Promise<string | null> {
    const url = value.trim();
    if (url !== '') {
      const problem = await privacyUrlProblem(url, this.config.mode);
      if (problem) throw new ValidationFailedError({ privacy_webhook_url: [problem] });
    }
    await this.storage.apps.updatePrivacyWebhookUrl(appId, url || null);
    return url || null;
  }

  /**
   * Turns `iss` on the redirect with the code on or off. An app opts in once its callback checks
   * `iss`: that redirect is signed, and a client signing the percent-encoded query (as many
   * existing ones do) cannot match a signature over the URL-valued `iss`.
   */
  async setAuthorizationIss(appId: number, on: boolean): Promise<void> {
    await this.storage.apps.updateAuthorizationIss(appId, on);
  }

  async findByClientId(clientId: string | undefined): Promise<AppProfile | undefined> {
    if (!clientId || clientId.length > 100) return undefined;
    const row = await this.storage.apps.findByClientId(clientId);
    return row && profileOf(row);
  }

  async listApps(): Promise<AppProfile[]> {
    return (await this.storage.apps.listApps()).map(profileOf);
  }

  /** The current client secret in plaintext (shown on an explicit reveal; what signs is `SecretRotations`' call). */
  clientSecret(app: AppProfile | SealedAppSecrets): string {
    return this.box.open(sealedSecretsOf(app).client_secret_enc);
  }

  /** Client authentication (RFC 6749 section 2.3.1); the previous secret works until it expires after a rotation. */
  async authenticateClient(clientId: string | undefined, clientSecret: string | undefined): Promise<AppProfile> {
    const client = this.clientCheck(clientId, clientSecret);
    return profileOf(client.check(client.lookupId === undefined ? undefined : await this.storage.apps.findByClientId(client.lookupId)));
  }

  /** The same authentication as a check a grant runs on the app it looks up (see ClientAuth). */
  clientCheck(clientId: string | undefined, clientSecret: string | undefined, request?: GrantRequest): ClientCheck {
    return this.clients.presented(clientId, clientSecret, request);
  }

  findInstallation(storeId: number, appId: number): Promise<InstallationRow | undefined> {
    return this.storage.apps.findInstallation(storeId, appId);
  }

  /**
   * Records the merchant's consent: the granted scopes become exactly `scopes`, in one
   * transaction. When they shrink, every token family of the installation ends. When they change
   * at all (a reinstall included), every code issued before ends (it was issued for the grant as it
   * stood), and the app's subscriptions to topics it may no longer read are deleted with their
   * queued deliveries. A change of an active installation's scopes sends `app/scopes_update` to
   * the app's subscriptions to it; a reinstall cancels the `shop/redact` still waiting. An install
   * or change also brings the store's copies of the app's app-level subscriptions to what the new
   * grant allows (one read of the app's row when it has none).
   */
  async grant(storeId: number, appId: number, scopes: readonly Scope[]): Promise<InstallationRow> {
    const now = this.clock();
    const wanted = formatScopes(scopes);
    return this.storage.transaction(async (tx) => {
      const existing = await tx.apps.findInstallation(storeId, appId);
      if (!existing) {
        const row = await tx.apps.insertInstallation({ storeId, appId, scopes: wanted, now });
        await copiesOnGrant(tx, { storeId, appId, scopes, now });
        return row;
      }
      const active = existing.uninstalled_at === null;
      const before = active ? existing.scopes.split(',').filter(Boolean) : [];
      const changed = !active || existing.scopes !== wanted;
      // Codes first, as in `uninstall`: a redemption in flight finishes before the revocation looks.
      if (changed) await tx.tokens.expireCodes(storeId, existing.id, now);
      if (before.some((s) => !scopes.includes(s as Scope))) await tx.tokens.revokeInstallation(storeId, existing.id, now);
      if (changed) await tx.webhooks.removeSubscriptions({ storeId, appId, topics: unreadableTopics(scopes), reason: SCOPE_LOST, now });
      if (!active)
        await tx.webhooks.cancelPendingTopic({ storeId, appId, topic: 'shop/redact', reason: 'the app was installed again', now });
      await tx.apps.updateInstallation(storeId, existing.id, {
        scopes: wanted,
        uninstalledAt: null,
        ...(existing.uninstalled_at !== null ? { installedAt: now } : {}),
      });
      if (changed) await copiesOnGrant(tx, { storeId, appId, scopes, now });
      if (active && changed) {
        const store = await this.storeName(tx, storeId);
        await this.outbox.enqueue(tx, {
          storeId,
          topic: 'app/scopes_update',
          appId,
          payload: {
            id: String(existing.id),
            previous: before,
            current: [...scopes].sort(),
            updated_at: new Date(now).toISOString(),
            shop_domain: storeHostname(store, this.config.storeDomain),
          },
        });
      }
      return { ...existing, scopes: wanted, uninstalled_at: null };
    });
  }

  async createPrivateApp(input: {
    storeId: number;
    name: string;
    scopes: string;
  }): Promise<{ id: number; accessToken: string; webhookSecret: string }> {
    const { errors, name, scopes } = checkPrivateApp(input);
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const accessToken = newToken('private');
    const webhookSecret = newToken('webhookSecret');
    // Sealed before the transaction: sealing reads the current master key outside it.
    const webhookSecretEnc = await this.box.seal(webhookSecret);
    const id = await this.storage.transaction(async (tx) => {
      // Concurrent creates in the store take turns from here, so two cannot both count one below the cap.
      await tx.accounts.lockStore(input.storeId);
      if ((await tx.apps.countActivePrivateApps(input.storeId)) >= MAX_ACTIVE_PRIVATE_APPS) {
        throw new ValidationFailedError({
          base: [`a store may have at most ${MAX_ACTIVE_PRIVATE_APPS} active private apps; revoke one first`],
        });
      }
      return tx.apps.insertPrivateApp({
        storeId: input.storeId,
        name,
        scopes: formatScopes(scopes),
        tokenHash: hashToken(accessToken),
        webhookSecretEnc,
        now: this.clock(),
      });
    });
    return { id, accessToken, webhookSecret };
  }

  /** Public apps a merchant can install (every registered app), by name. */
  async listPublicApps(): Promise<Pick<AppProfile, 'id' | 'client_id' | 'name' | 'scopes'>[]> {
    const apps = await this.listApps();
    return apps.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
  }

  /** Apps installed in a store now, with the scopes granted. */
  listInstalled(storeId: number): Promise<InstalledApp[]> {
    return this.storage.apps.listInstalled(storeId);
  }

  listPrivateApps(storeId: number): Promise<PrivateAppSummary[]> {
    return this.storage.apps.listPrivateApps(storeId);
  }

  /** Revokes a store's private app: its token stops working at once. Unknown or foreign id → 404. */
  async revokePrivateApp(storeId: number, id: number): Promise<void> {
    if (!(await this.storage.apps.revokePrivateApp(storeId, id, this.clock())))
      throw new NotFoundError('No active private app with this id in this store');
  }

  async listPartnerApps(partnerId: number): Promise<AppProfile[]> {
    return (await this.storage.apps.listPartnerApps(partnerId)).map(profileOf);
  }

  /** A partner's own app by client id; another partner's app or an unknown id is a 404. */
  async findPartnerApp(partnerId: number, clientId: string | undefined): Promise<AppProfile> {
    const app = await this.findByClientId(clientId);
    if (!app || app.partner_id !== partnerId) throw new NotFoundError('No app with this client id');
    return app;
  }

  /** Checks an App URL and redirect URL pair; field → messages, empty when both are fine. */
  urlErrors(appUrl: string | undefined, redirectUri: string | undefined): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    const a = checkAppUrl(appUrl, this.config.mode);
    if (a) errors.app_url = [a];
    const r = checkAppUrl(redirectUri, this.config.mode);
    if (r) errors.redirect_uri = [r];
    return errors;
  }

  /**
   * Renames the app and changes the scopes it asks for. Installations keep what the merchant
   * granted: the new scopes take effect when the merchant consents to them (for an app the platform
   * installs, asked the next time they open it).
   */
  async updateProfile(appId: number, input: { name: string; scopes: string }): Promise<void> {
    const errors: Record<string, string[]> = {};
    const name = input.name?.trim() ?? '';
    if (name.length < 1 || name.length > 100) errors.name = ['must be 1 to 100 characters'];
    let scopes: Scope[] = [];
    try {
      scopes = parseScopes(input.scopes ?? '');
    } catch (err) {
      if (!(err instanceof ScopeParseError)) throw err;
      errors.scopes = [err.message];
    }
    if (scopes.length === 0 && (await this.storage.apps.findById(appId))?.managed_install === 1) errors.scopes = [MANAGED_NEEDS_SCOPES];
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    await this.storage.apps.updateProfile(appId, { name, scopes: formatScopes(scopes) });
  }

  async updateUrls(appId: number, appUrl: string, redirectUri: string): Promise<void> {
    const errors = this.urlErrors(appUrl, redirectUri);
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    await this.storage.apps.updateUrls(appId, appUrl, redirectUri);
  }
}

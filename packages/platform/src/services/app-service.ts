// Partner apps (client credentials), installations (grants) and private apps.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.ts';
import { isLocalHostname } from '../domain/ssrf.ts';
import { formatScopes, parseScopes, ScopeParseError, type Scope } from '../domain/scopes.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { hashToken, newToken } from '../domain/tokens.ts';
import { InvalidClient, NotFoundError, ValidationFailedError } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import { defineQuery, KyselyRunner, SqliteRunner, type PreparedQuery, type QueryRunner } from '../storage/prepared-query.ts';
import type { Clock } from './clock.ts';
import type { OAuthService } from './oauth-service.ts';
import type { WebhookOutbox } from '../webhooks/outbox.ts';

export interface AppRow {
  id: number;
  client_id: string;
  partner_id: number | null;
  name: string;
  app_url: string;
  redirect_uri: string;
  scopes: string;
  client_secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
}

export interface InstallationRow {
  id: number;
  store_id: number;
  app_id: number;
  scopes: string;
  uninstalled_at: number | null;
}

/**
 * App URL and redirect URL rules (seed §1, PRODUCT.md §3): absolute http(s) URL, no `#`, no
 * credentials; https required in production except for loopback and `*.localhost`.
 */
export function checkAppUrl(value: string | undefined, mode: Config['mode']): string | undefined {
  if (!value) return 'is required';
  if (value.length > 2000) return 'must be at most 2000 characters';
  if (value.includes('#')) return 'must not contain "#"';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'http:' && mode === 'production' && !isLocalHostname(url.hostname)) return 'must use https (http is allowed only for localhost and loopback)';
  return undefined;
}

/** A private app's name and scopes, checked: field → messages (empty when valid). */
export function checkPrivateApp(input: { name: string; scopes: string }): { errors: Record<string, string[]>; name: string; scopes: Scope[] } {
  const errors: Record<string, string[]> = {};
  const name = input.name?.trim() ?? '';
  if (name.length < 1 || name.length > 100) errors.name = ['must be 1 to 100 characters'];
  let scopes: Scope[] = [];
  try {
    scopes = parseScopes(input.scopes ?? '');
    if (scopes.length === 0) errors.scopes = ['choose at least one scope'];
  } catch (err) {
    if (!(err instanceof ScopeParseError)) throw err;
    errors.scopes = [err.message];
  }
  return { errors, name, scopes };
}

export class AppService {
  /** Where `app/uninstalled` is enqueued (set by createServices). */
  webhooks: WebhookOutbox | undefined;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly config: Pick<Config, 'mode'> & Partial<Pick<Config, 'storeDomain'>>,
    private readonly clock: Clock,
    private readonly oauth: OAuthService,
  ) {}

  /**
   * Uninstalls an app from a store (PRODUCT.md §5, §7), in one transaction: the installation ends,
   * every token of it is revoked, its queued webhooks are cancelled and `app/uninstalled` is
   * enqueued for the app's subscriptions to that topic. Nothing else reaches the app afterwards.
   */
  async uninstall(storeId: number, appId: number): Promise<void> {
    const now = this.clock();
    await this.db.kysely.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom('installations as i')
        .innerJoin('stores as s', 's.id', 'i.store_id')
        .innerJoin('apps as a', 'a.id', 'i.app_id')
        .select(['i.id', 'i.uninstalled_at', 's.name as store_name', 'a.client_id'])
        .where('i.store_id', '=', storeId)
        .where('i.app_id', '=', appId)
        .executeTakeFirst();
      if (!found || found.uninstalled_at !== null) throw new NotFoundError('The app is not installed in this store');
      await trx.updateTable('installations').set({ uninstalled_at: now }).where('id', '=', found.id).execute();
      await this.oauth.revokeInstallation(trx, found.id, now);
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'cancelled', last_error: 'the app was uninstalled', claimed_by: null, claimed_until: null, updated_at: now })
        .where('store_id', '=', storeId)
        .where('app_id', '=', appId)
        .where('status', '=', 'pending')
        .where('topic', '!=', 'app/uninstalled')
        .execute();
      await this.webhooks?.enqueue(trx, {
        storeId,
        topic: 'app/uninstalled',
        uninstalledAppId: appId,
        payload: {
          id: String(storeId),
          name: found.store_name,
          domain: `${found.store_name}.${this.config.storeDomain ?? 'localhost'}`,
          client_id: found.client_id,
          uninstalled_at: new Date(now).toISOString(),
        },
      });
    });
    this.webhooks?.afterCommit();
  }

  /** A new app's fields, checked: field → messages (empty when valid). */
  checkApp(input: { name: string; appUrl: string; redirectUri: string; scopes?: string }): { errors: Record<string, string[]>; name: string; scopes: Scope[] } {
    const errors: Record<string, string[]> = {};
    const name = input.name?.trim() ?? '';
    if (name.length < 1 || name.length > 100) errors.name = ['must be 1 to 100 characters'];
    Object.assign(errors, this.urlErrors(input.appUrl, input.redirectUri));
    let scopes: Scope[] = [];
    try {
      scopes = parseScopes(input.scopes ?? '');
    } catch (err) {
      if (!(err instanceof ScopeParseError)) throw err;
      errors.scopes = [err.message];
    }
    return { errors, name, scopes };
  }

  async createApp(input: { name: string; appUrl: string; redirectUri: string; scopes?: string; partnerId?: number | null }): Promise<{ app: AppRow; clientSecret: string }> {
    const { errors, name, scopes } = this.checkApp(input);
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const clientId = randomBytes(16).toString('hex');
    const clientSecret = newToken('clientSecret');
    const app = await this.db.kysely
      .insertInto('apps')
      .values({
        client_id: clientId,
        partner_id: input.partnerId ?? null,
        name,
        app_url: input.appUrl,
        redirect_uri: input.redirectUri,
        scopes: formatScopes(scopes),
        client_secret_enc: this.box.seal(clientSecret),
        previous_secret_enc: null,
        previous_secret_expires_at: null,
        created_at: this.clock(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { app, clientSecret };
  }

  // Read on every token request: compiled once, run as a prepared statement on SQLite.
  private byClientIdQuery: PreparedQuery<AppRow> | undefined;
  private runner: QueryRunner | undefined;

  findByClientId(clientId: string | undefined): Promise<AppRow | undefined> {
    if (!clientId || clientId.length > 100) return Promise.resolve(undefined);
    this.byClientIdQuery ??= defineQuery<AppRow>(this.db.kysely, (p) => this.db.kysely.selectFrom('apps').selectAll().where('client_id', '=', p('id')));
    this.runner ??= this.db.sqlite ? new SqliteRunner(this.db) : new KyselyRunner(this.db.kysely);
    return this.runner.first(this.byClientIdQuery, { id: clientId });
  }

  listApps(): Promise<AppRow[]> {
    return this.db.kysely.selectFrom('apps').selectAll().orderBy('id').execute();
  }

  /** The current client secret in plaintext (the platform signs redirects and webhooks with it). */
  clientSecret(app: AppRow): string {
    return this.box.open(app.client_secret_enc);
  }

  /** Client authentication (RFC 6749 §2.3.1); the previous secret works until it expires after a rotation. */
  async authenticateClient(clientId: string | undefined, clientSecret: string | undefined): Promise<AppRow> {
    if (!clientId) throw new InvalidClient('client_id is required');
    if (!clientSecret) throw new InvalidClient('client_secret is required');
    const app = await this.findByClientId(clientId);
    if (!app) throw new InvalidClient();
    const candidates = [app.client_secret_enc];
    if (app.previous_secret_enc && (app.previous_secret_expires_at ?? 0) > this.clock()) candidates.push(app.previous_secret_enc);
    const given = Buffer.from(clientSecret);
    const ok = candidates.some((enc) => {
      const expected = Buffer.from(this.box.open(enc));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
    if (!ok) throw new InvalidClient();
    return app;
  }

  findInstallation(storeId: number, appId: number): Promise<InstallationRow | undefined> {
    return this.db.kysely
      .selectFrom('installations')
      .select(['id', 'store_id', 'app_id', 'scopes', 'uninstalled_at'])
      .where('store_id', '=', storeId)
      .where('app_id', '=', appId)
      .executeTakeFirst();
  }

  /**
   * Records the merchant's consent: the granted scopes become exactly `scopes`. When they shrink,
   * every token family of the installation ends.
   */
  async grant(storeId: number, appId: number, scopes: readonly Scope[]): Promise<InstallationRow> {
    const now = this.clock();
    const wanted = formatScopes(scopes);
    return this.db.kysely.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('installations').select(['id', 'store_id', 'app_id', 'scopes', 'uninstalled_at']).where('store_id', '=', storeId).where('app_id', '=', appId).executeTakeFirst();
      if (!existing) {
        return trx.insertInto('installations').values({ store_id: storeId, app_id: appId, scopes: wanted, installed_at: now, uninstalled_at: null }).returning(['id', 'store_id', 'app_id', 'scopes', 'uninstalled_at']).executeTakeFirstOrThrow();
      }
      const before = existing.uninstalled_at === null ? existing.scopes.split(',').filter(Boolean) : [];
      if (before.some((s) => !scopes.includes(s as Scope))) await this.oauth.revokeInstallation(trx, existing.id, now);
      await trx
        .updateTable('installations')
        .set({ scopes: wanted, uninstalled_at: null, ...(existing.uninstalled_at !== null ? { installed_at: now } : {}) })
        .where('id', '=', existing.id)
        .execute();
      return { ...existing, scopes: wanted, uninstalled_at: null };
    });
  }

  async createPrivateApp(input: { storeId: number; name: string; scopes: string }): Promise<{ id: number; accessToken: string; webhookSecret: string }> {
    const { errors, name, scopes } = checkPrivateApp(input);
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const accessToken = newToken('private');
    const webhookSecret = newToken('webhookSecret');
    const row = await this.db.kysely
      .insertInto('private_apps')
      .values({
        store_id: input.storeId,
        name,
        scopes: formatScopes(scopes),
        token_hash: hashToken(accessToken),
        webhook_secret_enc: this.box.seal(webhookSecret),
        created_at: this.clock(),
        revoked_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, accessToken, webhookSecret };
  }

  // ---- store admin and partner dashboard (issue 5) ----

  /** Public apps a merchant can install (every registered app). */
  listPublicApps(): Promise<Pick<AppRow, 'id' | 'client_id' | 'name' | 'scopes'>[]> {
    return this.db.kysely.selectFrom('apps').select(['id', 'client_id', 'name', 'scopes']).orderBy('name').orderBy('id').execute();
  }

  /** Apps installed in a store now, with the scopes granted. */
  listInstalled(storeId: number): Promise<{ app_id: number; client_id: string; name: string; scopes: string; installed_at: number }[]> {
    return this.db.kysely
      .selectFrom('installations as i')
      .innerJoin('apps as a', 'a.id', 'i.app_id')
      .select(['i.app_id', 'a.client_id', 'a.name', 'i.scopes', 'i.installed_at'])
      .where('i.store_id', '=', storeId)
      .where('i.uninstalled_at', 'is', null)
      .orderBy('a.name')
      .execute();
  }

  listPrivateApps(storeId: number) {
    return this.db.kysely
      .selectFrom('private_apps')
      .select(['id', 'name', 'scopes', 'created_at', 'revoked_at'])
      .where('store_id', '=', storeId)
      .orderBy('id', 'desc')
      .limit(200)
      .execute();
  }

  /** Revokes a store's private app: its token stops working at once. Unknown or foreign id → 404. */
  async revokePrivateApp(storeId: number, id: number): Promise<void> {
    const res = await this.db.kysely
      .updateTable('private_apps')
      .set({ revoked_at: this.clock() })
      .where('id', '=', id)
      .where('store_id', '=', storeId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw new NotFoundError('No active private app with this id in this store');
  }

  listPartnerApps(partnerId: number): Promise<AppRow[]> {
    return this.db.kysely.selectFrom('apps').selectAll().where('partner_id', '=', partnerId).orderBy('id').execute();
  }

  /** A partner's own app by client id; another partner's app or an unknown id is a 404. */
  async findPartnerApp(partnerId: number, clientId: string | undefined): Promise<AppRow> {
    const app = await this.findByClientId(clientId);
    if (!app || app.partner_id !== partnerId) throw new NotFoundError('No app with this client id');
    return app;
  }

  /** Checks an App URL and redirect URL pair (seed §1); field → messages, empty when both are fine. */
  urlErrors(appUrl: string | undefined, redirectUri: string | undefined): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    const a = checkAppUrl(appUrl, this.config.mode);
    if (a) errors.app_url = [a];
    const r = checkAppUrl(redirectUri, this.config.mode);
    if (r) errors.redirect_uri = [r];
    return errors;
  }

  async updateUrls(appId: number, appUrl: string, redirectUri: string): Promise<void> {
    const errors = this.urlErrors(appUrl, redirectUri);
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    await this.db.kysely.updateTable('apps').set({ app_url: appUrl, redirect_uri: redirectUri }).where('id', '=', appId).execute();
  }

  /**
   * A new client secret. The current one becomes the previous secret and keeps authenticating for
   * `graceMs` (24 h by default), so running apps can roll over; an older previous secret ends now.
   */
  async rotateSecret(appId: number, graceMs = 24 * 3600_000): Promise<string> {
    const secret = newToken('clientSecret');
    await this.db.kysely.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('apps').select(['client_secret_enc']).where('id', '=', appId).executeTakeFirst();
      if (!row) throw new NotFoundError('No app with this id');
      await trx
        .updateTable('apps')
        .set({ client_secret_enc: this.box.seal(secret), previous_secret_enc: row.client_secret_enc, previous_secret_expires_at: this.clock() + graceMs })
        .where('id', '=', appId)
        .execute();
    });
    return secret;
  }
}

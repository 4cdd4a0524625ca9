// Public apps (client credentials), their installations in stores, and private apps.
import type { AppRepository, PrivateAppSecrets, SecretOwner } from '../ports/apps.ts';
import type { AppRow, InstallationRow, InstalledApp, NewApp, PrivateAppSummary } from '../ports/rows.ts';
import type { Executor } from './executor.ts';
import { APP_COLUMNS } from './prepared-statements.ts';

const INSTALLATION_COLUMNS = ['id', 'store_id', 'app_id', 'scopes', 'uninstalled_at'] as const;

export class SqlAppRepository implements AppRepository {
  constructor(private readonly x: Executor) {}

  insertApp(app: NewApp): Promise<AppRow> {
    return this.x.k
      .insertInto('apps')
      .values({ ...app, previous_secret_enc: null, previous_secret_expires_at: null })
      .returning([...APP_COLUMNS])
      .executeTakeFirstOrThrow();
  }

  findByClientId(clientId: string): Promise<AppRow | undefined> {
    return this.x.runner.first(this.x.prepared.appByClientId, { id: clientId });
  }

  findById(id: number): Promise<AppRow | undefined> {
    return this.x.k
      .selectFrom('apps')
      .select([...APP_COLUMNS])
      .where('id', '=', id)
      .executeTakeFirst();
  }

  listApps(): Promise<AppRow[]> {
    return this.x.k
      .selectFrom('apps')
      .select([...APP_COLUMNS])
      .orderBy('id')
      .execute();
  }

  listPartnerApps(partnerId: number): Promise<AppRow[]> {
    return this.x.k
      .selectFrom('apps')
      .select([...APP_COLUMNS])
      .where('partner_id', '=', partnerId)
      .orderBy('id')
      .execute();
  }

  async updateUrls(appId: number, appUrl: string, redirectUri: string): Promise<void> {
    await this.x.k.updateTable('apps').set({ app_url: appUrl, redirect_uri: redirectUri }).where('id', '=', appId).execute();
  }

  async updateProfile(appId: number, profile: { name: string; scopes: string }): Promise<void> {
    await this.x.k.updateTable('apps').set({ name: profile.name, scopes: profile.scopes }).where('id', '=', appId).execute();
  }

  async updatePrivacyWebhookUrl(appId: number, url: string | null): Promise<void> {
    await this.x.k.updateTable('apps').set({ privacy_webhook_url: url }).where('id', '=', appId).execute();
  }

  async updateAuthorizationIss(appId: number, on: boolean): Promise<void> {
    await this.x.k
      .updateTable('apps')
      .set({ authorization_iss: on ? 1 : 0 })
      .where('id', '=', appId)
      .execute();
  }

  async updateWebhookSignatureEd25519(appId: number, on: boolean): Promise<void> {
    await this.x.k
      .updateTable('apps')
      .set({ webhook_signature_ed25519: on ? 1 : 0 })
      .where('id', '=', appId)
      .execute();
  }

  async updateManagedInstall(appId: number, on: boolean): Promise<void> {
    await this.x.k
      .updateTable('apps')
      .set({ managed_install: on ? 1 : 0 })
      .where('id', '=', appId)
      .execute();
  }

  async anyWithoutIss(): Promise<boolean> {
    const row = await this.x.k.selectFrom('apps').select('id').where('authorization_iss', '=', 0).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async updateSecrets(appId: number, s: { current: string; previous: string | null; previousExpiresAt: number | null }): Promise<void> {
    await this.x.k
      .updateTable('apps')
      .set({ client_secret_enc: s.current, previous_secret_enc: s.previous, previous_secret_expires_at: s.previousExpiresAt })
      .where('id', '=', appId)
      .execute();
  }

  findInstallation(storeId: number, appId: number): Promise<InstallationRow | undefined> {
    return this.x.k
      .selectFrom('installations')
      .select([...INSTALLATION_COLUMNS])
      .where('store_id', '=', storeId)
      .where('app_id', '=', appId)
      .executeTakeFirst();
  }

  insertInstallation(input: { storeId: number; appId: number; scopes: string; now: number }): Promise<InstallationRow> {
    return this.x.k
      .insertInto('installations')
      .values({ store_id: input.storeId, app_id: input.appId, scopes: input.scopes, installed_at: input.now, uninstalled_at: null })
      .returning([...INSTALLATION_COLUMNS])
      .executeTakeFirstOrThrow();
  }

  async updateInstallation(
    storeId: number,
    id: number,
    change: { scopes?: string; installedAt?: number; uninstalledAt?: number | null },
  ): Promise<void> {
    await this.x.k
      .updateTable('installations')
      .set({
        ...(change.scopes !== undefined ? { scopes: change.scopes } : {}),
        ...(change.installedAt !== undefined ? { installed_at: change.installedAt } : {}),
        ...(change.uninstalledAt !== undefined ? { uninstalled_at: change.uninstalledAt } : {}),
      })
      .where('store_id', '=', storeId)
      .where('id', '=', id)
      .execute();
  }

  listInstalled(storeId: number): Promise<InstalledApp[]> {
    return this.x.k
      .selectFrom('installations as i')
      .innerJoin('apps as a', 'a.id', 'i.app_id')
      .select(['i.app_id', 'a.client_id', 'a.name', 'i.scopes', 'i.installed_at'])
      .where('i.store_id', '=', storeId)
      .where('i.uninstalled_at', 'is', null)
      .orderBy('a.name')
      .execute();
  }

  async insertPrivateApp(input: {
    storeId: number;
    name: string;
    scopes: string;
    tokenHash: string;
    webhookSecretEnc: string;
    now: number;
  }): Promise<number> {
    const row = await this.x.k
      .insertInto('private_apps')
      .values({
        store_id: input.storeId,
        name: input.name,
        scopes: input.scopes,
        token_hash: input.tokenHash,
        webhook_secret_enc: input.webhookSecretEnc,
        created_at: input.now,
        revoked_at: null,
        previous_webhook_secret_enc: null,
        previous_webhook_secret_expires_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  listPrivateApps(storeId: number): Promise<PrivateAppSummary[]> {
    return this.x.k
      .selectFrom('private_apps')
      .select(['id', 'name', 'scopes', 'created_at', 'revoked_at', 'previous_webhook_secret_expires_at'])
      .where('store_id', '=', storeId)
      .orderBy('id', 'desc')
      .limit(200)
      .execute();
  }

  async countActivePrivateApps(storeId: number): Promise<number> {
    const row = await this.x.k
      .selectFrom('private_apps')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('store_id', '=', storeId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  findPrivateApp(
    storeId: number,
    id: number,
  ): Promise<{ id: number; store_id: number; webhook_secret_enc: string; revoked_at: number | null } | undefined> {
    return this.x.k
      .selectFrom('private_apps')
      .select(['id', 'store_id', 'webhook_secret_enc', 'revoked_at'])
      .where('store_id', '=', storeId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async revokePrivateApp(storeId: number, id: number, now: number): Promise<boolean> {
    const res = await this.x.k
      .updateTable('private_apps')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('store_id', '=', storeId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async startSecretRotation(
    owner: SecretOwner,
    c: { expectedCurrent: string; current: string; previousExpiresAt: number; now: number },
  ): Promise<boolean> {
    const res =
      'appId' in owner
        ? await this.x.k
            .updateTable('apps')
            .set({ client_secret_enc: c.current, previous_secret_enc: c.expectedCurrent, previous_secret_expires_at: c.previousExpiresAt })
            .where('id', '=', owner.appId)
            .where('client_secret_enc', '=', c.expectedCurrent)
            .where((eb) => eb.or([eb('previous_secret_enc', 'is', null), eb('previous_secret_expires_at', '<=', c.now)]))
            .executeTakeFirst()
        : await this.x.k
            .updateTable('private_apps')
            .set({
              webhook_secret_enc: c.current,
              previous_webhook_secret_enc: c.expectedCurrent,
              previous_webhook_secret_expires_at: c.previousExpiresAt,
            })
            .where('id', '=', owner.privateAppId)
            .where('store_id', '=', owner.storeId)
            .where('revoked_at', 'is', null)
            .where('webhook_secret_enc', '=', c.expectedCurrent)
            .where((eb) => eb.or([eb('previous_webhook_secret_enc', 'is', null), eb('previous_webhook_secret_expires_at', '<=', c.now)]))
            .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async finishSecretRotation(owner: SecretOwner, now: number): Promise<boolean> {
    const res =
      'appId' in owner
        ? await this.x.k
            .updateTable('apps')
            .set({ previous_secret_enc: null, previous_secret_expires_at: null })
            .where('id', '=', owner.appId)
            .where('previous_secret_enc', 'is not', null)
            .where('previous_secret_expires_at', '>', now)
            .executeTakeFirst()
        : await this.x.k
            .updateTable('private_apps')
            .set({ previous_webhook_secret_enc: null, previous_webhook_secret_expires_at: null })
            .where('id', '=', owner.privateAppId)
            .where('store_id', '=', owner.storeId)
            .where('revoked_at', 'is', null)
            .where('previous_webhook_secret_enc', 'is not', null)
            .where('previous_webhook_secret_expires_at', '>', now)
            .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  findPrivateAppSecrets(storeId: number, id: number): Promise<PrivateAppSecrets | undefined> {
    return this.x.k
      .selectFrom('private_apps')
      .select(['id', 'name', 'webhook_secret_enc', 'previous_webhook_secret_enc', 'previous_webhook_secret_expires_at'])
      .where('id', '=', id)
      .where('store_id', '=', storeId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
  }
}

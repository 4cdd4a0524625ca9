// Listings and account repairs for the administrative commands (see ports/admin-directory.ts).
import type { Kysely } from 'kysely';
import type {
  AdminDirectoryRepository,
  AppListRow,
  InstallationListRow,
  MerchantRow,
  PartnerListRow,
  PrivateAppListRow,
  StoreListRow,
} from '../ports/admin-directory.ts';
import type { Database } from '../schema.ts';
import { fleetWide } from '../fleet-wide.ts';

export class SqlAdminDirectory implements AdminDirectoryRepository {
  constructor(private readonly k: Kysely<Database>) {}

  async stores(): Promise<StoreListRow[]> {
    const rows = await this.k
      .selectFrom('stores')
      .innerJoin('merchants', 'merchants.id', 'stores.owner_merchant_id')
      .select((eb) => [
        'stores.id',
        'stores.name',
        'merchants.email as owner_email',
        'stores.currency',
        'stores.timezone',
        'stores.created_at',
        eb
          .selectFrom('installations')
          .select(eb.fn.countAll().as('n'))
          .whereRef('installations.store_id', '=', 'stores.id')
          .where('installations.uninstalled_at', 'is', null)
          .as('installed_apps'),
        eb
          .selectFrom('private_apps')
          .select(eb.fn.countAll().as('n'))
          .whereRef('private_apps.store_id', '=', 'stores.id')
          .where('private_apps.revoked_at', 'is', null)
          .as('private_apps'),
      ])
      .orderBy('stores.name')
      .modifyEnd(fleetWide('operator-directory'))
      .execute();
    return rows.map((r) => ({
      ...r,
      id: Number(r.id),
      created_at: Number(r.created_at),
      installed_apps: Number(r.installed_apps ?? 0),
      private_apps: Number(r.private_apps ?? 0),
    }));
  }

  async partners(): Promise<PartnerListRow[]> {
    const rows = await this.k
      .selectFrom('partners')
      .select((eb) => [
        'partners.id',
        'partners.email',
        'partners.created_at',
        eb.selectFrom('apps').select(eb.fn.countAll().as('n')).whereRef('apps.partner_id', '=', 'partners.id').as('apps'),
      ])
      .orderBy('partners.email')
      .execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), created_at: Number(r.created_at), apps: Number(r.apps ?? 0) }));
  }

  async apps(): Promise<AppListRow[]> {
    const rows = await this.k
      .selectFrom('apps')
      .leftJoin('partners', 'partners.id', 'apps.partner_id')
      .select((eb) => [
        'apps.id',
        'apps.client_id',
        'apps.name',
        'partners.email as partner_email',
        'apps.app_url',
        'apps.redirect_uri',
        'apps.scopes',
        'apps.privacy_webhook_url',
        'apps.authorization_iss',
        'apps.managed_install',
        'apps.created_at',
        eb
          .selectFrom('installations')
          .select(eb.fn.countAll().as('n'))
          .whereRef('installations.app_id', '=', 'apps.id')
          .where('installations.uninstalled_at', 'is', null)
          .as('installations'),
      ])
      .orderBy('apps.id')
      .modifyEnd(fleetWide('operator-directory'))
      .execute();
    return rows.map((r) => ({
      ...r,
      id: Number(r.id),
      authorization_iss: Number(r.authorization_iss),
      managed_install: Number(r.managed_install),
      created_at: Number(r.created_at),
      installations: Number(r.installations ?? 0),
    }));
  }

  async privateApps(storeId?: number): Promise<PrivateAppListRow[]> {
    let q = this.k
      .selectFrom('private_apps')
      .innerJoin('stores', 'stores.id', 'private_apps.store_id')
      .select([
        'private_apps.id',
        'stores.name as store',
        'private_apps.name',
        'private_apps.scopes',
        'private_apps.created_at',
        'private_apps.revoked_at',
      ]);
    if (storeId !== undefined) q = q.where('private_apps.store_id', '=', storeId);
    const rows = await q.orderBy('stores.name').orderBy('private_apps.id').modifyEnd(fleetWide('operator-directory')).execute();
    return rows.map((r) => ({
      ...r,
      id: Number(r.id),
      created_at: Number(r.created_at),
      revoked_at: r.revoked_at === null ? null : Number(r.revoked_at),
    }));
  }

  async installations(filter: { storeId?: number; appId?: number }): Promise<InstallationListRow[]> {
    let q = this.k
      .selectFrom('installations')
      .innerJoin('stores', 'stores.id', 'installations.store_id')
      .innerJoin('apps', 'apps.id', 'installations.app_id')
      .select([
        'installations.id',
        'stores.name as store',
        'apps.client_id',
        'apps.name as app',
        'installations.scopes',
        'installations.installed_at',
        'installations.uninstalled_at',
      ]);
    if (filter.storeId !== undefined) q = q.where('installations.store_id', '=', filter.storeId);
    if (filter.appId !== undefined) q = q.where('installations.app_id', '=', filter.appId);
    const rows = await q.orderBy('installations.id', 'desc').modifyEnd(fleetWide('operator-directory')).execute();
    return rows.map((r) => ({
      ...r,
      id: Number(r.id),
      installed_at: Number(r.installed_at),
      uninstalled_at: r.uninstalled_at === null ? null : Number(r.uninstalled_at),
    }));
  }

  async merchantByEmail(email: string): Promise<MerchantRow | undefined> {
    const merchant = await this.k
      .selectFrom('merchants')
      .select(['id', 'email'])
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .executeTakeFirst();
    if (!merchant) return undefined;
    const stores = await this.k
      .selectFrom('stores')
      .select(['id', 'name'])
      .where('owner_merchant_id', '=', merchant.id)
      .orderBy('name')
      .execute();
    return { id: Number(merchant.id), email: merchant.email, stores: stores.map((s) => ({ id: Number(s.id), name: s.name })) };
  }

  async loginLocks(keys: readonly string[]): Promise<{ key: string; locked_until: number | null }[]> {
    // `in ()` is an error on PostgreSQL.
    if (keys.length === 0) return [];
    const rows = await this.k
      .selectFrom('login_attempts')
      .select(['key', 'locked_until'])
      .where('key', 'in', [...keys])
      .execute();
    return rows.map((r) => ({ key: r.key, locked_until: r.locked_until === null ? null : Number(r.locked_until) }));
  }

  async clearLoginCounts(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.k
      .deleteFrom('login_attempts')
      .where('key', 'in', [...keys])
      .execute();
  }

  async setMerchantPasswordHash(merchantId: number, passwordHash: string): Promise<void> {
    await this.k.updateTable('merchants').set({ password_hash: passwordHash }).where('id', '=', merchantId).execute();
  }

  async endMerchantSessions(merchantId: number): Promise<number> {
    const result = await this.k
      .deleteFrom('web_sessions')
      .where('kind', '=', 'merchant')
      .where('subject_id', '=', merchantId)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

// What the administrative commands list and show (stores, partners, apps, private apps,
// installations) and the account repairs they make (unlocking a merchant, resetting a password).
// Never a secret: client secrets, tokens and webhook secrets are shown once when made, not here.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import { NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import type { PasswordHasher } from '../domain/password.ts';
import type {
  AdminDirectoryRepository,
  AppListRow,
  InstallationListRow,
  PartnerListRow,
  PrivateAppListRow,
  StoreListRow,
} from '../storage/ports/admin-directory.ts';
import { validateEmailPassword } from './account-service.ts';
import { accountKey, merchantAccount } from './login-throttle.ts';

type Dated<T, K extends keyof T> = Omit<T, K> & { [P in K]: T[P] extends number ? string : string | null };

export type StoreView = Dated<StoreListRow, 'created_at'>;
export type PartnerView = Dated<PartnerListRow, 'created_at'>;
export type AppView = Omit<Dated<AppListRow, 'created_at'>, 'authorization_iss' | 'managed_install'> & {
  authorization_iss: boolean;
  managed_install: boolean;
};
export type PrivateAppView = Dated<PrivateAppListRow, 'created_at' | 'revoked_at'> & { status: 'active' | 'revoked' };
export type InstallationView = Dated<InstallationListRow, 'installed_at' | 'uninstalled_at'> & { status: 'installed' | 'uninstalled' };

export interface UnlockResult {
  email: string;
  /** Stores where the merchant's logins were locked until now. */
  unlocked: string[];
}

export interface PasswordReset {
  email: string;
  /** Set only when the password was generated: the caller shows it once. */
  generated_password?: string;
  sessions_ended: number;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export class AdminDirectory {
  constructor(
    private readonly repo: AdminDirectoryRepository,
    private readonly clock: Clock,
    private readonly passwords: PasswordHasher,
  ) {}

  async stores(): Promise<StoreView[]> {
    return (await this.repo.stores()).map((s) => ({ ...s, created_at: iso(s.created_at) }));
  }

  async store(name: string): Promise<StoreView> {
    const found = (await this.stores()).find((s) => s.name === name.toLowerCase());
    if (!found) throw new NotFoundError(`no store named "${name.slice(0, 100)}"`);
    return found;
  }

  async partners(): Promise<PartnerView[]> {
    return (await this.repo.partners()).map((p) => ({ ...p, created_at: iso(p.created_at) }));
  }

  async partner(email: string): Promise<PartnerView> {
    const found = (await this.partners()).find((p) => p.email.toLowerCase() === email.toLowerCase());
    if (!found) throw new NotFoundError(`no partner account with email "${email.slice(0, 100)}"`);
    return found;
  }

  async apps(): Promise<AppView[]> {
    return (await this.repo.apps()).map((a) => ({
      ...a,
      authorization_iss: a.authorization_iss === 1,
      managed_install: a.managed_install === 1,
      created_at: iso(a.created_at),
    }));
  }

  async app(clientId: string): Promise<AppView> {
    const found = (await this.apps()).find((a) => a.client_id === clientId);
    if (!found) throw new NotFoundError(`no app with client_id "${clientId.slice(0, 100)}"`);
    return found;
  }

  async privateApps(storeId?: number): Promise<PrivateAppView[]> {
    return (await this.repo.privateApps(storeId)).map((p) => ({
      ...p,
      status: p.revoked_at === null ? 'active' : 'revoked',
      created_at: iso(p.created_at),
      revoked_at: isoOrNull(p.revoked_at),
    }));
  }

  async privateApp(storeId: number, id: number): Promise<PrivateAppView> {
    const found = (await this.privateApps(storeId)).find((p) => p.id === id);
    if (!found) throw new NotFoundError(`no private app with id ${id} in this store`);
    return found;
  }

  async installations(filter: { storeId?: number; appId?: number } = {}): Promise<InstallationView[]> {
    return (await this.repo.installations(filter)).map((i) => ({
      ...i,
      status: i.uninstalled_at === null ? 'installed' : 'uninstalled',
      installed_at: iso(i.installed_at),
      uninstalled_at: isoOrNull(i.uninstalled_at),
    }));
  }

  async installation(id: number): Promise<InstallationView> {
    const found = (await this.installations()).find((i) => i.id === id);
    if (!found) throw new NotFoundError(`no installation with id ${id}`);
    return found;
  }

  /**
   * Lifts the login lock of a merchant (after too many wrong passwords) in every store it owns, or
   * in the one named; the failed attempts counted so far are forgotten too.
   */
  async unlockMerchant(email: string, storeName?: string): Promise<UnlockResult> {
    const { merchant, stores } = await this.merchantStores(email, storeName);
    const keys = new Map(stores.map((s) => [accountKey(merchantAccount(s.id, merchant.email)), s.name]));
    const now = this.clock();
    const locked = (await this.repo.loginLocks([...keys.keys()]))
      .filter((l) => l.locked_until !== null && l.locked_until > now)
      .map((l) => keys.get(l.key)!);
    await this.repo.clearLoginCounts([...keys.keys()]);
    return { email: merchant.email, unlocked: locked.sort() };
  }

  /**
   * Sets a merchant's password (a generated one when none is given), ends its browser sessions
   * and lifts its login locks: whoever held the old password is out.
   */
  async resetMerchantPassword(email: string, password?: string): Promise<PasswordReset> {
    const { merchant, stores } = await this.merchantStores(email);
    const generated = password === undefined ? randomBytes(15).toString('base64url') : undefined;
    const next = password ?? generated!;
    const problems = validateEmailPassword(merchant.email, next);
    if (problems.password) throw new ValidationFailedError({ password: problems.password });
    await this.repo.setMerchantPasswordHash(merchant.id, await this.passwords.hash(next));
    const ended = await this.repo.endMerchantSessions(merchant.id);
    await this.repo.clearLoginCounts(stores.map((s) => accountKey(merchantAccount(s.id, merchant.email))));
    return { email: merchant.email, ...(generated ? { generated_password: generated } : {}), sessions_ended: ended };
  }

  private async merchantStores(email: string, storeName?: string) {
    const merchant = await this.repo.merchantByEmail(email);
    if (!merchant) throw new NotFoundError(`no merchant with email "${email.slice(0, 100)}"`);
    if (storeName === undefined) return { merchant, stores: merchant.stores };
    const store = merchant.stores.find((s) => s.name === storeName.toLowerCase());
    if (!store) throw new NotFoundError(`${merchant.email} owns no store named "${storeName.slice(0, 100)}"`);
    return { merchant, stores: [store] };
  }
}

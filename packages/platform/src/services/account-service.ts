// Stores, merchants, partners and their browser sessions.
import type { Clock } from '../domain/clock.ts';
import { NotFoundError, ValidationFailedError } from '../domain/errors.ts';
import type { PasswordHasher } from '../domain/password.ts';
import { canonicalTimezone, currencyProblem, timezoneProblem } from '../domain/shop-profile.ts';
import { isValidStoreName } from '../domain/store-host.ts';
import { hashToken, newToken } from '../domain/tokens.ts';
import type { ShopRow, StoreRow, WebSessionRow } from '../storage/ports/rows.ts';
import type { Storage } from '../storage/ports/storage.ts';

/** A store as the routes know it: its id, its name (its host) and its owner. */
export type Store = StoreRow;

export const SESSION_TTL_MS = 12 * 3600 * 1000;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function validateEmailPassword(email: string | undefined, password: string | undefined): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (!email || !EMAIL.test(email)) errors.email = ['must be an email address'];
  if (!password || password.length < 8) errors.password = ['must be at least 8 characters'];
  else if (password.length > 200) errors.password = ['must be at most 200 characters'];
  return errors;
}

export class AccountService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly passwords: PasswordHasher,
  ) {}

  async createStore(input: {
    name: string;
    ownerEmail: string;
    ownerPassword: string;
    /** ISO 4217 code; the column's default (USD) when absent. */
    currency?: string | undefined;
    /** IANA zone name; the column's default (UTC) when absent. */
    timezone?: string | undefined;
  }): Promise<StoreRow> {
    const name = input.name.toLowerCase();
    const errors = validateEmailPassword(input.ownerEmail, input.ownerPassword);
    if (!isValidStoreName(name)) errors.name = ['must start with a letter or digit and contain only a-z, 0-9 and hyphens (at most 63)'];
    const currencyError = input.currency === undefined ? undefined : currencyProblem(input.currency);
    if (currencyError) errors.currency = [currencyError];
    const timezoneError = input.timezone === undefined ? undefined : timezoneProblem(input.timezone);
    if (timezoneError) errors.timezone = [timezoneError];
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const profile = {
      ...(input.currency !== undefined ? { currency: input.currency } : {}),
      ...(input.timezone !== undefined ? { timezone: canonicalTimezone(input.timezone) } : {}),
    };
    const email = input.ownerEmail.toLowerCase();
    const passwordHash = await this.passwords.hash(input.ownerPassword);
    const now = this.clock();
    return this.storage.transaction(async (tx) => {
      if (await tx.accounts.storeNameTaken(name)) throw new ValidationFailedError({ name: ['is already taken'] });
      let merchant = await tx.accounts.findMerchantByEmail(email);
      if (merchant && !(await this.passwords.verify(input.ownerPassword, merchant.password_hash))) {
        throw new ValidationFailedError({ owner_email: ['belongs to an existing merchant with another password'] });
      }
      merchant ??= await tx.accounts.insertMerchant({ email, passwordHash, now });
      return tx.accounts.insertStore({ name, ownerMerchantId: merchant.id, now, ...profile });
    });
  }

  /** The store's profile as apps read it, with its owner's email. */
  async findShop(storeId: number): Promise<ShopRow> {
    const row = await this.storage.accounts.findShop(storeId);
    if (!row) throw new NotFoundError('No such store');
    return row;
  }

  // Store names and ids never change, so a found store is kept for a while (per process, not shared).
  private readonly storeCache = new Map<string, { row: StoreRow; until: number }>();

  /** The store if this process looked it up recently (no I/O). */
  cachedStore(name: string): StoreRow | undefined {
    const hit = this.storeCache.get(name);
    return hit && hit.until > Date.now() ? hit.row : undefined;
  }

  async findStoreByName(name: string): Promise<StoreRow | undefined> {
    const now = Date.now();
    const hit = this.storeCache.get(name);
    if (hit && hit.until > now) return hit.row;
    const row = await this.storage.accounts.findStoreByName(name);
    if (row) {
      if (this.storeCache.size > 10_000) this.storeCache.clear();
      this.storeCache.set(name, { row, until: now + 60_000 });
    }
    return row;
  }

  async createPartner(input: { email: string; password: string }): Promise<{ id: number; email: string }> {
    const errors = validateEmailPassword(input.email, input.password);
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const email = input.email.toLowerCase();
    if (await this.storage.accounts.findPartnerByEmail(email)) throw new ValidationFailedError({ email: ['is already registered'] });
    return this.storage.accounts.insertPartner({ email, passwordHash: await this.passwords.hash(input.password), now: this.clock() });
  }

  async findPartnerByEmail(email: string): Promise<{ id: number; email: string } | undefined> {
    const row = await this.storage.accounts.findPartnerByEmail(email.toLowerCase());
    return row && { id: row.id, email: row.email };
  }

  findPartnerById(id: number): Promise<{ id: number; email: string } | undefined> {
    return this.storage.accounts.findPartnerById(id);
  }

  /** The merchant who owns `store`, when the credentials match; same work whether or not the email exists. */
  async authenticateMerchant(store: StoreRow, email: string, password: string): Promise<number | undefined> {
    const merchant = await this.storage.accounts.findMerchantByEmail(email.toLowerCase());
    const ok = await this.passwords.verify(password.slice(0, 200), merchant?.password_hash ?? (await this.passwords.dummyHash()));
    return ok && merchant && merchant.id === store.owner_merchant_id ? merchant.id : undefined;
  }

  /** The partner's id when the credentials match; same work whether or not the email exists. */
  async authenticatePartner(email: string, password: string): Promise<number | undefined> {
    const partner = await this.storage.accounts.findPartnerByEmail(email.toLowerCase());
    const ok = await this.passwords.verify(password.slice(0, 200), partner?.password_hash ?? (await this.passwords.dummyHash()));
    return ok && partner ? partner.id : undefined;
  }

  async startSession(kind: 'merchant' | 'partner', subjectId: number, storeId: number | null): Promise<string> {
    const id = newToken('session');
    const now = this.clock();
    await this.storage.sessions.insertSession({ idHash: hashToken(id), kind, subjectId, storeId, expiresAt: now + SESSION_TTL_MS, now });
    return id;
  }

  async findSession(kind: 'merchant' | 'partner', id: string | undefined, storeId: number | null): Promise<WebSessionRow | undefined> {
    if (!id || id.length > 100) return undefined;
    const row = await this.storage.sessions.findSession(hashToken(id));
    if (!row || row.kind !== kind || row.expires_at <= this.clock() || (storeId !== null && row.store_id !== storeId)) return undefined;
    return row;
  }

  async endSession(id: string | undefined): Promise<void> {
    if (!id || id.length > 100) return;
    await this.storage.sessions.deleteSession(hashToken(id));
  }
}

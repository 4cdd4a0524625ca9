// Stores, merchants, partners and their browser sessions.
import type { Config } from '../config.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../domain/password.ts';
import { isValidStoreName } from '../domain/shop-host.ts';
import { hashToken, newToken } from '../domain/tokens.ts';
import { ValidationFailedError } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import type { Clock } from './clock.ts';

export interface StoreRow {
  id: number;
  name: string;
  owner_merchant_id: number;
}

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
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async createStore(input: { name: string; ownerEmail: string; ownerPassword: string }): Promise<StoreRow> {
    const name = input.name.toLowerCase();
    const errors = validateEmailPassword(input.ownerEmail, input.ownerPassword);
    if (!isValidStoreName(name)) errors.name = ['must start with a letter or digit and contain only a-z, 0-9 and hyphens (at most 63)'];
    if (Object.keys(errors).length > 0) throw new ValidationFailedError(errors);
    const email = input.ownerEmail.toLowerCase();
    const passwordHash = await hashPassword(input.ownerPassword);
    const now = this.clock();
    return this.db.kysely.transaction().execute(async (trx) => {
      if (await trx.selectFrom('stores').select('id').where('name', '=', name).executeTakeFirst()) {
        throw new ValidationFailedError({ name: ['is already taken'] });
      }
      let merchant = await trx.selectFrom('merchants').select(['id', 'password_hash']).where('email', '=', email).executeTakeFirst();
      if (merchant && !(await verifyPassword(input.ownerPassword, merchant.password_hash))) {
        throw new ValidationFailedError({ owner_email: ['belongs to an existing merchant with another password'] });
      }
      merchant ??= await trx.insertInto('merchants').values({ email, password_hash: passwordHash, created_at: now }).returning(['id', 'password_hash']).executeTakeFirstOrThrow();
      return trx.insertInto('stores').values({ name, owner_merchant_id: merchant.id, created_at: now }).returning(['id', 'name', 'owner_merchant_id']).executeTakeFirstOrThrow();
    });
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
    const row = await this.db.kysely.selectFrom('stores').select(['id', 'name', 'owner_merchant_id']).where('name', '=', name).executeTakeFirst();
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
    if (await this.db.kysely.selectFrom('partners').select('id').where('email', '=', email).executeTakeFirst()) {
      throw new ValidationFailedError({ email: ['is already registered'] });
    }
    return this.db.kysely
      .insertInto('partners')
      .values({ email, password_hash: await hashPassword(input.password), created_at: this.clock() })
      .returning(['id', 'email'])
      .executeTakeFirstOrThrow();
  }

  findPartnerByEmail(email: string) {
    return this.db.kysely.selectFrom('partners').select(['id', 'email']).where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  /** The merchant who owns `store`, when the credentials match; same work whether or not the email exists. */
  async authenticateMerchant(store: StoreRow, email: string, password: string): Promise<number | undefined> {
    const merchant = await this.db.kysely.selectFrom('merchants').select(['id', 'password_hash']).where('email', '=', email.toLowerCase()).executeTakeFirst();
    const ok = await verifyPassword(password.slice(0, 200), merchant?.password_hash ?? (await DUMMY_PASSWORD_HASH()));
    return ok && merchant && merchant.id === store.owner_merchant_id ? merchant.id : undefined;
  }

  /** The partner's id when the credentials match; same work whether or not the email exists. */
  async authenticatePartner(email: string, password: string): Promise<number | undefined> {
    const partner = await this.db.kysely.selectFrom('partners').select(['id', 'password_hash']).where('email', '=', email.toLowerCase()).executeTakeFirst();
    const ok = await verifyPassword(password.slice(0, 200), partner?.password_hash ?? (await DUMMY_PASSWORD_HASH()));
    return ok && partner ? partner.id : undefined;
  }

  async startSession(kind: 'merchant' | 'partner', subjectId: number, storeId: number | null): Promise<string> {
    const id = newToken('session');
    const now = this.clock();
    await this.db.kysely
      .insertInto('web_sessions')
      .values({ id_hash: hashToken(id), kind, subject_id: subjectId, store_id: storeId, expires_at: now + SESSION_TTL_MS, created_at: now })
      .execute();
    return id;
  }

  async findSession(kind: 'merchant' | 'partner', id: string | undefined, storeId: number | null) {
    if (!id || id.length > 100) return undefined;
    const row = await this.db.kysely.selectFrom('web_sessions').selectAll().where('id_hash', '=', hashToken(id)).executeTakeFirst();
    if (!row || row.kind !== kind || row.expires_at <= this.clock() || (storeId !== null && row.store_id !== storeId)) return undefined;
    return row;
  }

  async endSession(id: string | undefined): Promise<void> {
    if (!id || id.length > 100) return;
    await this.db.kysely.deleteFrom('web_sessions').where('id_hash', '=', hashToken(id)).execute();
  }

  static shopHostname(config: Pick<Config, 'storeDomain'>, storeName: string): string {
    return `${storeName}.${config.storeDomain}`;
  }
}

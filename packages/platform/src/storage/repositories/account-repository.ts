// Stores, their merchants, and partners (the developers who register apps).
import { sql } from 'kysely';
import type { AccountRepository } from '../ports/accounts.ts';
import type { CredentialRow, ShopRow, StoreRow } from '../ports/rows.ts';
import type { Executor } from './executor.ts';

export class SqlAccountRepository implements AccountRepository {
  constructor(private readonly x: Executor) {}

  findStoreByName(name: string): Promise<StoreRow | undefined> {
    return this.x.k.selectFrom('stores').select(['id', 'name', 'owner_merchant_id']).where('name', '=', name).executeTakeFirst();
  }

  async findStoreNameById(id: number): Promise<string | undefined> {
    return (await this.x.k.selectFrom('stores').select('name').where('id', '=', id).executeTakeFirst())?.name;
  }

  async storeNameTaken(name: string): Promise<boolean> {
    return (await this.x.k.selectFrom('stores').select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
  }

  async lockStore(storeId: number): Promise<void> {
    if (this.x.dialect === 'postgres') {
      // NO KEY UPDATE conflicts with itself but not with the KEY SHARE lock a foreign-key check
      // takes, so inserts of the store's products, orders and customers go on meanwhile.
      await sql`select id from stores where id = ${storeId} for no key update`.execute(this.x.k);
    } else {
      // A write that changes nothing makes this transaction the database's one writer now rather
      // than at its first real write (which, on a snapshot another process has since moved past,
      // would fail instead of waiting).
      await this.x.k
        .updateTable('stores')
        .set((eb) => ({ name: eb.ref('name') }))
        .where('id', '=', storeId)
        .execute();
    }
  }

  insertStore(input: { name: string; ownerMerchantId: number; now: number; currency?: string; timezone?: string }): Promise<StoreRow> {
    return this.x.k
      .insertInto('stores')
      .values({
        name: input.name,
        owner_merchant_id: input.ownerMerchantId,
        created_at: input.now,
        ...(input.currency !== undefined ? { currency: input.currency } : {}),
        ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
      })
      .returning(['id', 'name', 'owner_merchant_id'])
      .executeTakeFirstOrThrow();
  }

  findShop(storeId: number): Promise<ShopRow | undefined> {
    return this.x.k
      .selectFrom('stores as s')
      .innerJoin('merchants as m', 'm.id', 's.owner_merchant_id')
      .select(['s.id', 's.name', 's.currency', 's.timezone', 's.created_at', 'm.email as owner_email'])
      .where('s.id', '=', storeId)
      .executeTakeFirst();
  }

  findMerchantByEmail(email: string): Promise<CredentialRow | undefined> {
    return this.x.k.selectFrom('merchants').select(['id', 'email', 'password_hash']).where('email', '=', email).executeTakeFirst();
  }

  insertMerchant(input: { email: string; passwordHash: string; now: number }): Promise<CredentialRow> {
    return this.x.k
      .insertInto('merchants')
      .values({ email: input.email, password_hash: input.passwordHash, created_at: input.now })
      .returning(['id', 'email', 'password_hash'])
      .executeTakeFirstOrThrow();
  }

  findPartnerByEmail(email: string): Promise<CredentialRow | undefined> {
    return this.x.k.selectFrom('partners').select(['id', 'email', 'password_hash']).where('email', '=', email).executeTakeFirst();
  }

  findPartnerById(id: number): Promise<{ id: number; email: string } | undefined> {
    return this.x.k.selectFrom('partners').select(['id', 'email']).where('id', '=', id).executeTakeFirst();
  }

  insertPartner(input: { email: string; passwordHash: string; now: number }): Promise<{ id: number; email: string }> {
    return this.x.k
      .insertInto('partners')
      .values({ email: input.email, password_hash: input.passwordHash, created_at: input.now })
      .returning(['id', 'email'])
      .executeTakeFirstOrThrow();
  }
}

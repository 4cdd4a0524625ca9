// Stores, their merchants, and partners (the developers who register apps).
import type { AccountRepository, CredentialRow, StoreRow } from '../ports.ts';
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

  insertStore(input: { name: string; ownerMerchantId: number; now: number }): Promise<StoreRow> {
    return this.x.k
      .insertInto('stores')
      .values({ name: input.name, owner_merchant_id: input.ownerMerchantId, created_at: input.now })
      .returning(['id', 'name', 'owner_merchant_id'])
      .executeTakeFirstOrThrow();
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

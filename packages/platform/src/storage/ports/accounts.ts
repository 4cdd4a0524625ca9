// The port on stores and the people who sign in: merchants (who own stores) and partners (who make apps).
import type { CredentialRow, ShopRow, StoreRow } from './rows.ts';

export interface AccountRepository {
  findStoreByName(name: string): Promise<StoreRow | undefined>;
  findStoreNameById(id: number): Promise<string | undefined>;
  storeNameTaken(name: string): Promise<boolean>;
  /**
   * Inside a transaction: holds the store until the transaction ends, so that transactions which
   * count a store's records before adding one (the caps on subscriptions and private apps) take
   * turns instead of both counting below the cap. Writes that only reference the store go on.
   */
  lockStore(storeId: number): Promise<void>;
  insertStore(input: { name: string; ownerMerchantId: number; now: number; currency?: string; timezone?: string }): Promise<StoreRow>;
  /** The store's profile with its owner's email. */
  findShop(storeId: number): Promise<ShopRow | undefined>;
  findMerchantByEmail(email: string): Promise<CredentialRow | undefined>;
  insertMerchant(input: { email: string; passwordHash: string; now: number }): Promise<CredentialRow>;
  findPartnerByEmail(email: string): Promise<CredentialRow | undefined>;
  findPartnerById(id: number): Promise<{ id: number; email: string } | undefined>;
  insertPartner(input: { email: string; passwordHash: string; now: number }): Promise<{ id: number; email: string }>;
}

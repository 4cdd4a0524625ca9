// Bulk fake data for `storegate seed` and the demo store: rows made as the database takes them, in
// batches of one transaction each (the storage's bulk insert), progress reported after each batch.
import type { Clock } from '../domain/clock.ts';
import type { BulkTable, NewRecord } from '../storage/ports/bulk-rows.ts';
import type { Storage } from '../storage/ports/storage.ts';

export interface SeedCounts {
  products: number;
  orders: number;
  customers: number;
}

const ADJECTIVES = ['Classic', 'Organic', 'Vintage', 'Handmade', 'Modern', 'Rustic', 'Compact', 'Deluxe', 'Everyday', 'Limited'];
const NOUNS = ['Mug', 'Backpack', 'T-shirt', 'Lamp', 'Notebook', 'Candle', 'Scarf', 'Teapot', 'Blanket', 'Sneakers', 'Wallet', 'Planter'];
const VENDORS = ['Northwind', 'Acme Goods', 'Blue Harbor', 'Fern & Oak', 'Kettle Co.'];
const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Radia', 'Edsger'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie', 'Perlman', 'Dijkstra'];

/** A deterministic pseudo-random sequence (mulberry32) so seeded stores look alike on every machine. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Rows per transaction: large enough that a transaction's fixed costs (a commit, a round trip) vanish,
// small enough that another writer waits little for SQLite's lock and progress shows often.
const BATCH = 20_000;

export class SeedService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async seed(storeId: number, counts: SeedCounts, onProgress: (kind: keyof SeedCounts, done: number) => void = () => {}): Promise<void> {
    const rand = rng(storeId * 7919 + counts.products);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const now = this.clock();

    await this.fill('products', counts.products, onProgress, (i) => {
      const title = `${pick(ADJECTIVES)} ${pick(NOUNS)}`;
      return {
        store_id: storeId,
        title,
        body_html: `<p>${title}, made to last.</p>`,
        vendor: pick(VENDORS),
        product_type: pick(NOUNS),
        status: rand() < 0.9 ? 'active' : 'draft',
        price: (5 + Math.floor(rand() * 19500) / 100).toFixed(2),
        sku: `SKU-${storeId}-${i + 1}`,
        inventory_quantity: Math.floor(rand() * 500),
        tags: pick(['new', 'sale', 'gift', '']),
        created_at: now,
        updated_at: now,
      };
    });

    // Numbered on from the store's newest customer: emails are unique per store, and a store seeded
    // again draws the same names.
    const [newest] = await this.storage.resources.page('customers').before({ storeId }, Number.MAX_SAFE_INTEGER, 1);
    const offset = newest ? newest.id : 0;
    await this.fill('customers', counts.customers, onProgress, (i) => {
      const given = pick(FIRST);
      const last = pick(LAST);
      return {
        store_id: storeId,
        email: `${given}.${last}.${offset + i + 1}@example.com`.toLowerCase(),
        first_name: given,
        last_name: last,
        phone: null,
        created_at: now,
        updated_at: now,
      };
    });

    const customerIds = await this.storage.resources.someCustomers(storeId, 1000);
    await this.fill('orders', counts.orders, onProgress, () => {
      const customer = customerIds.length > 0 ? pick(customerIds) : undefined;
      const qty = 1 + Math.floor(rand() * 3);
      const price = (5 + Math.floor(rand() * 9500) / 100).toFixed(2);
      return {
        store_id: storeId,
        customer_id: customer?.id ?? null,
        email: customer?.email ?? 'guest@example.com',
        currency: 'USD',
        financial_status: pick(['paid', 'paid', 'pending', 'refunded']),
        fulfillment_status: pick([null, 'fulfilled', 'partial']),
        total_price: (Number(price) * qty).toFixed(2),
        line_items: JSON.stringify([{ title: `${pick(ADJECTIVES)} ${pick(NOUNS)}`, quantity: qty, price }]),
        created_at: now,
        updated_at: now,
      };
    });
  }

  /** `count` rows made by `make` (given each row's number from 0), a batch per transaction. */
  private async fill<T extends BulkTable>(
    table: T,
    count: number,
    onProgress: (kind: keyof SeedCounts, done: number) => void,
    make: (i: number) => NewRecord<T>,
  ): Promise<void> {
    for (let done = 0; done < count; ) {
      const end = Math.min(done + BATCH, count);
      await this.storage.bulkRows.insert(table, rowsOf(done, end, make));
      done = end;
      onProgress(table, done);
    }
  }
}

/** Rows `from`..`to` - 1, made one by one as the insert takes them. */
function* rowsOf<R>(from: number, to: number, make: (i: number) => R): Generator<R> {
  for (let i = from; i < to; i++) yield make(i);
}

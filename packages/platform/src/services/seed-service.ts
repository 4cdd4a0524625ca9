// Bulk fake data for `storegate seed` and the demo store: batched multi-row inserts, one
// transaction per batch, progress reported after each batch.
import type { Clock } from '../domain/clock.ts';
import type { Storage } from '../storage/ports.ts';

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

export class SeedService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async seed(storeId: number, counts: SeedCounts, onProgress: (kind: keyof SeedCounts, done: number) => void = () => {}): Promise<void> {
    const rand = rng(storeId * 7919 + counts.products);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const now = this.clock();
    // 13 columns × 1000 rows stays under SQLite's and PostgreSQL's bound-parameter limits.
    const batch = 1000;

    for (let done = 0; done < counts.products; ) {
      const n = Math.min(batch, counts.products - done);
      const rows = Array.from({ length: n }, (_, i) => {
        const title = `${pick(ADJECTIVES)} ${pick(NOUNS)}`;
        return {
          store_id: storeId,
          title,
          body_html: `<p>${title}, made to last.</p>`,
          vendor: pick(VENDORS),
          product_type: pick(NOUNS),
          status: rand() < 0.9 ? 'active' : 'draft',
          price: (5 + Math.floor(rand() * 19500) / 100).toFixed(2),
          sku: `SKU-${storeId}-${done + i + 1}`,
          inventory_quantity: Math.floor(rand() * 500),
          tags: pick(['new', 'sale', 'gift', '']),
          created_at: now,
          updated_at: now,
        };
      });
      await this.storage.transaction((tx) => tx.resources.insertMany('products', rows));
      done += n;
      onProgress('products', done);
    }

    // Numbered on from the store's newest customer: emails are unique per store, and a store seeded
    // again draws the same names.
    const [newest] = await this.storage.resources.page('customers').before({ storeId }, Number.MAX_SAFE_INTEGER, 1);
    const offset = newest ? newest.id : 0;
    for (let done = 0; done < counts.customers; ) {
      const n = Math.min(batch, counts.customers - done);
      const rows = Array.from({ length: n }, (_, i) => {
        const given = pick(FIRST);
        const last = pick(LAST);
        return {
          store_id: storeId,
          email: `${given}.${last}.${offset + done + i + 1}@example.com`.toLowerCase(),
          first_name: given,
          last_name: last,
          phone: null,
          created_at: now,
          updated_at: now,
        };
      });
      await this.storage.transaction((tx) => tx.resources.insertMany('customers', rows));
      done += n;
      onProgress('customers', done);
    }

    const customerIds = await this.storage.resources.someCustomers(storeId, 1000);
    for (let done = 0; done < counts.orders; ) {
      const n = Math.min(batch, counts.orders - done);
      const rows = Array.from({ length: n }, () => {
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
      await this.storage.transaction((tx) => tx.resources.insertMany('orders', rows));
      done += n;
      onProgress('orders', done);
    }
  }
}

// The platform's webhook signing keys (see ports/webhook-signing-keys.ts), on SQLite and PostgreSQL
// alike. The unique `active` column carries the "one active key" rule: a second first key, or a
// second rotation of the same key, fails on it or on the compare-and-set instead of adding a key.
import type { Kysely } from 'kysely';
import type { NewSigningKey, RotateResult, SigningKeyRow, WebhookSigningKeyRepository } from '../ports/webhook-signing-keys.ts';
import type { Database } from '../schema.ts';
import { isUniqueViolation } from '../unique-violation.ts';

const COLUMNS = ['kid', 'public_key', 'private_key_enc', 'active', 'created_at', 'retires_at'] as const;

type Stored = Pick<Database['webhook_signing_keys'], (typeof COLUMNS)[number]>;

function row(r: Stored): SigningKeyRow {
  return {
    kid: r.kid,
    public_key: r.public_key,
    private_key_enc: r.private_key_enc,
    active: r.active !== null && Number(r.active) === 1,
    created_at: Number(r.created_at),
    retires_at: r.retires_at === null ? null : Number(r.retires_at),
  };
}

// The active key first (it is the newest), then the replaced ones newest first, ties by kid: every
// node lists, and signs with, the keys in the same order.
function newestFirst(rows: Stored[]): SigningKeyRow[] {
  return rows
    .map(row)
    .sort((a, b) => Number(b.active) - Number(a.active) || b.created_at - a.created_at || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
}

export class SqlWebhookSigningKeyRepository implements WebhookSigningKeyRepository {
  constructor(private readonly k: Kysely<Database>) {}

  async live(now: number): Promise<SigningKeyRow[]> {
    const rows = await this.k
      .selectFrom('webhook_signing_keys')
      .select(COLUMNS)
      .where((eb) => eb.or([eb('active', '=', 1), eb('retires_at', '>', now)]))
      .execute();
    return newestFirst(rows);
  }

  async all(): Promise<SigningKeyRow[]> {
    return newestFirst(await this.k.selectFrom('webhook_signing_keys').select(COLUMNS).execute());
  }

  async insertFirst(key: NewSigningKey): Promise<void> {
    try {
      await this.k
        .insertInto('webhook_signing_keys')
        .values({ ...key, active: 1, retires_at: null })
        .onConflict((oc) => oc.doNothing())
        .execute();
    } catch (err) {
      // SQLite names no conflict target for a bare DO NOTHING on some versions; the outcome is the same.
      if (!isUniqueViolation(err)) throw err;
    }
  }

  rotate(input: { expectedActive: string; next: NewSigningKey; retiresAt: number; now: number }): Promise<RotateResult> {
    return this.k.transaction().execute(async (trx): Promise<RotateResult> => {
      const overlapping = await trx
        .selectFrom('webhook_signing_keys')
        .select('kid')
        .where('active', 'is', null)
        .where('retires_at', '>', input.now)
        .limit(1)
        .executeTakeFirst();
      if (overlapping) return 'overlapping';
      // Compare-and-set: of two rotations at once, the second finds the key no longer active.
      const replaced = await trx
        .updateTable('webhook_signing_keys')
        .set({ active: null, retires_at: input.retiresAt })
        .where('kid', '=', input.expectedActive)
        .where('active', '=', 1)
        .executeTakeFirst();
      if (Number(replaced.numUpdatedRows) !== 1) return 'changed';
      await trx
        .insertInto('webhook_signing_keys')
        .values({ ...input.next, active: 1, retires_at: null })
        .execute();
      await trx.deleteFrom('webhook_signing_keys').where('active', 'is', null).where('retires_at', '<=', input.now).execute();
      return 'rotated';
    });
  }

  finish(now: number): Promise<string[]> {
    return this.k.transaction().execute(async (trx) => {
      const ending = await trx
        .selectFrom('webhook_signing_keys')
        .select('kid')
        .where('active', 'is', null)
        .where('retires_at', '>', now)
        .orderBy('kid')
        .execute();
      await trx.deleteFrom('webhook_signing_keys').where('active', 'is', null).execute();
      return ending.map((r) => r.kid);
    });
  }

  async deleteRetired(now: number): Promise<number> {
    const result = await this.k
      .deleteFrom('webhook_signing_keys')
      .where('active', 'is', null)
      .where('retires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

// The master key's record and the sealed values of every table, on SQLite and PostgreSQL.
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { fleetWide } from '../fleet-wide.ts';
import type { MasterKeyRepository, Reseal, SealedRow, SealedSource } from '../ports/master-keys.ts';

interface SourceShape {
  table: string;
  key: string;
  /** Integer keys are compared as numbers, text keys as text. */
  numeric: boolean;
  columns: readonly string[];
  /** Rows of the table that hold no sealed value are left out. */
  only?: string;
}

const SOURCES: Record<SealedSource, SourceShape> = {
  apps: { table: 'apps', key: 'id', numeric: true, columns: ['client_secret_enc', 'previous_secret_enc'] },
  private_apps: { table: 'private_apps', key: 'id', numeric: true, columns: ['webhook_secret_enc', 'previous_webhook_secret_enc'] },
  one_time_reveals: { table: 'one_time_reveals', key: 'id_hash', numeric: false, columns: ['payload_enc'] },
  // Only the `data:` entries are sealed; `current` and `previous` are public key ids.
  master_keys: { table: 'master_keys', key: 'name', numeric: false, columns: ['value'], only: "name like 'data:%'" },
  webhook_signing_keys: { table: 'webhook_signing_keys', key: 'kid', numeric: false, columns: ['private_key_enc'] },
};

export class SqlMasterKeyRepository implements MasterKeyRepository {
  constructor(private readonly db: Db) {}

  async recorded(): Promise<Map<string, string> | undefined> {
    try {
      const rows = await this.db.kysely.selectFrom('master_keys').select(['name', 'value']).execute();
      return new Map(rows.map((r) => [r.name, r.value]));
    } catch (err) {
      if (isMissingTable(err)) return undefined;
      throw err;
    }
  }

  async currentKeyId(): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('master_keys').select('value').where('name', '=', 'current').executeTakeFirst();
    return row?.value;
  }

  async recordIfAbsent(name: string, value: string, now: number): Promise<void> {
    await this.db.kysely
      .insertInto('master_keys')
      .values({ name, value, updated_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }

  async switchCurrent(input: { expected: string; next: string; previous: string; now: number }): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const switched = await trx
        .updateTable('master_keys')
        .set({ value: input.next, updated_at: input.now })
        .where('name', '=', 'current')
        .where('value', '=', input.expected)
        .executeTakeFirst();
      if (Number(switched.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('master_keys')
        .values({ name: 'previous', value: input.previous, updated_at: input.now })
        .onConflict((oc) => oc.column('name').doUpdateSet({ value: input.previous, updated_at: input.now }))
        .execute();
      return true;
    });
  }

  async anySealedValue(): Promise<string | undefined> {
    const app = await this.db.kysely.selectFrom('apps').select('client_secret_enc as v').orderBy('id').limit(1).executeTakeFirst();
    if (app) return app.v;
    const priv = await this.db.kysely
      .selectFrom('private_apps')
      .select('webhook_secret_enc as v')
      .orderBy('id')
      .limit(1)
      .modifyEnd(fleetWide('master-key-check'))
      .executeTakeFirst();
    return priv?.v;
  }

  async sealedPage(source: SealedSource, after: string | undefined, limit: number): Promise<SealedRow[]> {
    const s = SOURCES[source];
    const conditions = [];
    if (after !== undefined) conditions.push(sql`${sql.ref(s.key)} > ${s.numeric ? Number(after) : after}`);
    if (s.only) conditions.push(sql.raw(s.only));
    const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
    const columns = sql.join(s.columns.map((c) => sql.ref(c)));
    const { rows } = await sql<Record<string, string | number | null>>`select ${sql.ref(s.key)} as row_key, ${columns}
      from ${sql.table(s.table)} ${where} order by ${sql.ref(s.key)} limit ${limit} ${fleetWide('master-key-reseal')}`.execute(
      this.db.kysely,
    );
    return rows.map((r) => ({
      key: String(r.row_key),
      values: Object.fromEntries(s.columns.map((c) => [c, r[c] === null || r[c] === undefined ? null : String(r[c])])),
    }));
  }

  async reseal(source: SealedSource, replacements: readonly Reseal[]): Promise<number> {
    if (replacements.length === 0) return 0;
    const s = SOURCES[source];
    return this.db.kysely.transaction().execute(async (trx) => {
      let done = 0;
      for (const r of replacements) {
        if (!s.columns.includes(r.column)) throw new Error(`${r.column} is not a sealed column of ${s.table}`);
        // Compare-and-set: a secret rotated by a merchant meanwhile is already sealed anew, and stays.
        const result = await sql`update ${sql.table(s.table)} set ${sql.ref(r.column)} = ${r.value}
          where ${sql.ref(s.key)} = ${s.numeric ? Number(r.key) : r.key} and ${sql.ref(r.column)} = ${r.expected}
          ${fleetWide('master-key-reseal')}`.execute(trx);
        done += Number(result.numAffectedRows ?? 0);
      }
      return done;
    });
  }
}

// SQLite: "no such table"; PostgreSQL: undefined_table (42P01).
function isMissingTable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return code === '42P01' || (typeof message === 'string' && message.includes('no such table'));
}

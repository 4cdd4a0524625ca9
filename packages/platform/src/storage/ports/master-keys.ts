// The port on what the database records of its master key, and on every sealed value it holds
// (for re-sealing them under a new master key).

/** Where sealed values live: each source is one table with a key and one or more sealed columns. */
export type SealedSource = 'apps' | 'private_apps' | 'one_time_reveals' | 'master_keys' | 'webhook_signing_keys';
export const SEALED_SOURCES: readonly SealedSource[] = ['apps', 'private_apps', 'one_time_reveals', 'master_keys', 'webhook_signing_keys'];

/** One row of a source: its key (as text) and its sealed columns (null where the row has none). */
export interface SealedRow {
  key: string;
  values: Record<string, string | null>;
}

/** Replace `column` of row `key` by `value`, only if it still holds `expected`. */
export interface Reseal {
  key: string;
  column: string;
  expected: string;
  value: string;
}

export interface MasterKeyRepository {
  /**
   * The recorded entries by name (`current`, `previous`, `data:…`); undefined when the table does
   * not exist yet (a database not migrated this far).
   */
  recorded(): Promise<Map<string, string> | undefined>;
  /** The id of the master key the database's secrets are sealed with, if recorded. */
  currentKeyId(): Promise<string | undefined>;
  /** Records `value` under `name` unless something is recorded there already (then keeps that). */
  recordIfAbsent(name: string, value: string, now: number): Promise<void>;
  /**
   * Makes `next` the current key id and `previous` the previous one, only if `expected` is still
   * current (so two rotations cannot both switch). False when something else is current.
   */
  switchCurrent(input: { expected: string; next: string; previous: string; now: number }): Promise<boolean>;
  /** Some sealed value the database holds (an app's client secret, a private app's webhook secret), if any. */
  anySealedValue(): Promise<string | undefined>;
  /** Up to `limit` rows of `source` with a key after `after` (all from the start when undefined), in key order. */
  sealedPage(source: SealedSource, after: string | undefined, limit: number): Promise<SealedRow[]>;
  /** Applies the replacements in one transaction; returns how many rows still held the expected value. */
  reseal(source: SealedSource, replacements: readonly Reseal[]): Promise<number>;
}

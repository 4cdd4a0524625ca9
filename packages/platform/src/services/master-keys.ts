// Which master key this database's secrets are sealed with, checked when a node starts: a node
// holding another key would start and serve, then fail wherever it must open a secret, so it is
// refused at once instead. The database records the key's public id on its first start; from then
// on every node must hold that key (or, while the key changes, hold it as its previous key).
//
// Secrets are sealed under the key the database records as current, read at each seal, so that
// during a change of the master key every node seals under the key every other node can open.
// The keys that must survive a change (the refresh successor derivation key, the cursor signing
// key) are kept in the database sealed like any other secret, so a change neither breaks a refresh
// retry in flight nor invalidates the cursors apps hold.
import { ConfigError } from '../domain/errors.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { MasterKeyRepository } from '../storage/ports/master-keys.ts';

/** Seals and opens secrets for the services. */
export interface Sealer {
  seal(plaintext: string): Promise<string>;
  open(sealed: string): string;
}

export const DERIVATION_KEY = 'data:token-derivation';
export const CURSOR_KEY = 'data:cursor';

/** The sentence a node with the wrong master key stops with (ids only, never a key). */
export function mismatchMessage(box: SecretBox, recorded: string, previous: string | undefined): string {
  const replaced = previous !== undefined && box.has(previous) ? ' (the key this node holds was replaced by a rotation)' : '';
  return (
    `the master key does not match the key this database's secrets are sealed with (key id ${recorded}; ` +
    `this node's key id ${box.keyIds.join(', previous ')})${replaced}; start with the same MASTER_KEY as the other nodes, ` +
    'or see `storegate keys rotate`'
  );
}

export class MasterKeys implements Sealer {
  private constructor(
    private readonly box: SecretBox,
    private readonly repo: MasterKeyRepository,
    /** Derives a refresh token's successor pair. */
    readonly derivationKey: Buffer,
    /** Signs pagination cursors. */
    readonly cursorKey: Buffer,
  ) {}

  /**
   * Refuses a master key the database does not record, before anything is written (run it before
   * migrating: on a database not migrated this far there is nothing to compare yet).
   */
  static async verify(box: SecretBox, repo: MasterKeyRepository): Promise<void> {
    const recorded = await repo.recorded();
    const current = recorded?.get('current');
    if (current !== undefined && !box.has(current)) throw new ConfigError(mismatchMessage(box, current, recorded?.get('previous')));
  }

  /**
   * Checks the node's key against the database, recording it on a fresh database, and loads the
   * keys kept in the database. Two nodes starting at once on a fresh database both insert if
   * absent and then compare with what won, so they agree on one key (and one of them stops).
   */
  static async open(box: SecretBox, repo: MasterKeyRepository, now: number): Promise<MasterKeys> {
    let recorded = await repo.recorded();
    // Not migrated this far (a command that opens the database without migrating): keys as before.
    if (recorded === undefined) return MasterKeys.unchecked(box, repo);
    if (!recorded.has('current')) {
      // A database that predates the check holds secrets already: record the key that opens them.
      const sample = await repo.anySealedValue();
      const id = sample === undefined ? box.keyId : box.keyIdOf(sample);
      if (id === undefined) {
        throw new ConfigError(
          "the master key does not open the secrets already in this database (this node's key id " +
            `${box.keyIds.join(', previous ')}); start with the MASTER_KEY the database's secrets were sealed with`,
        );
      }
      await repo.recordIfAbsent('current', id, now);
      recorded = (await repo.recorded())!;
    }
    const current = recorded.get('current')!;
    if (!box.has(current)) throw new ConfigError(mismatchMessage(box, current, recorded.get('previous')));
    // Derived from the current key the first time, so the successors and cursors handed out before
    // the keys were kept here stay valid.
    const initial: [string, Buffer][] = [
      [DERIVATION_KEY, box.derivationKeyOf(current)],
      [CURSOR_KEY, box.subkey('cursor', current)],
    ];
    const missing = initial.filter(([name]) => !recorded!.has(name));
    for (const [name, key] of missing) await repo.recordIfAbsent(name, box.seal(key.toString('base64'), current), now);
    if (missing.length > 0) recorded = (await repo.recorded())!;
    const load = (name: string): Buffer => {
      const plain = (() => {
        try {
          return box.open(recorded!.get(name)!);
        } catch {
          throw new ConfigError(
            `the key kept in the database as ${name} is sealed under a master key this node does not hold; ` +
              'finish the change of master key with `storegate keys rotate` (the current key id is ' +
              `${current})`,
          );
        }
      })();
      return Buffer.from(plain, 'base64');
    };
    return new MasterKeys(box, repo, load(DERIVATION_KEY), load(CURSOR_KEY));
  }

  /** Without the database's record: the keys the node's own master key derives (as before they were kept). */
  static unchecked(box: SecretBox, repo: MasterKeyRepository): MasterKeys {
    return new MasterKeys(box, repo, box.derivationKey, box.subkey('cursor'));
  }

  /**
   * Seals under the key the database records as current now (every node holds it). A node that no
   * longer holds that key refuses to write a secret the other nodes could not open.
   */
  async seal(plaintext: string): Promise<string> {
    const current = await this.repo.currentKeyId();
    if (current === undefined) return this.box.seal(plaintext);
    if (!this.box.has(current)) {
      throw new Error(`the master key changed to key id ${current} while this node runs; restart it with the current MASTER_KEY`);
    }
    return this.box.seal(plaintext, current);
  }

  open(sealed: string): string {
    return this.box.open(sealed);
  }
}

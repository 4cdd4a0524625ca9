// Changing the master key while nodes keep running. The nodes are first restarted with the new key
// and the old one as their previous key, so each opens what either key sealed; then this rotation
// records the new key as current (from then on every node seals under it) and re-seals every
// sealed value in the database under the new key, in batches, each batch one transaction of
// compare-and-set updates. It can be stopped and run again at any point: a value already under the
// new key is left alone, so a second run re-seals only what the first did not reach.
import type { Clock } from '../domain/clock.ts';
import { ConfigError, ConflictError } from '../domain/errors.ts';
import { masterKeyId, SecretBox } from '../domain/secret-box.ts';
import { type MasterKeyRepository, type Reseal, SEALED_SOURCES, type SealedSource } from '../storage/ports/master-keys.ts';

export interface RotationReport {
  /** Key ids (never the keys). */
  from: string;
  to: string;
  /** Whether this run recorded the new key as current (false when an earlier run had). */
  switched: boolean;
  /** Values re-sealed under the new key, by where they live. */
  resealed: Record<SealedSource, number>;
  /** Values that were under the new key already. */
  alreadyNew: number;
  /** Values neither key opens (left as they are). */
  unreadable: number;
}

// A re-seal that lost its compare-and-set (the secret changed meanwhile) reads the batch again,
// a few times at most; whatever is still left is picked up by the next pass.
const RETRIES = 3;
// Passes over everything until one re-seals nothing: a secret sealed under the old key by a node
// that read the current key just before the switch lands after the first pass went by.
const MAX_PASSES = 3;

export class KeyRotation {
  constructor(
    private readonly repo: MasterKeyRepository,
    private readonly clock: Clock,
  ) {}

  async rotate(
    currentKey: Buffer,
    nextKey: Buffer,
    options: { batchSize?: number; onBatch?: (source: SealedSource, resealed: number) => void } = {},
  ): Promise<RotationReport> {
    const from = masterKeyId(currentKey);
    const to = masterKeyId(nextKey);
    if (from === to) throw new ConfigError('--new-master-key: is the same key as --master-key; nothing to rotate');
    const recorded = (await this.repo.recorded()) ?? new Map<string, string>();
    const current = recorded.get('current');
    let switched = false;
    if (current === from) {
      switched = await this.repo.switchCurrent({ expected: from, next: to, previous: from, now: this.clock() });
      if (!switched) throw new ConflictError('another rotation changed the master key meanwhile; this one changed nothing');
    } else if (current === to && recorded.get('previous') === from) {
      // An earlier run switched already: this one finishes (or confirms) the re-sealing.
    } else if (current === to) {
      throw new ConfigError(
        `--master-key: the database uses --new-master-key already (key id ${to}), and key id ${from} is not the key it replaced; ` +
          `nothing changed`,
      );
    } else {
      throw new ConfigError(
        `--master-key: not the key this database's secrets are sealed with (key id ${current ?? 'none recorded'}; ` +
          `--master-key has key id ${from}); nothing changed`,
      );
    }
    const box = new SecretBox(nextKey, currentKey);
    const report: RotationReport = {
      from,
      to,
      switched,
      resealed: { apps: 0, private_apps: 0, one_time_reveals: 0, master_keys: 0, webhook_signing_keys: 0 },
      alreadyNew: 0,
      unreadable: 0,
    };
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const before = total(report.resealed);
      report.unreadable = 0;
      // The kept keys first: a node started with only the new key needs them before anything else.
      for (const source of SEALED_SOURCES) {
        let after: string | undefined;
        for (;;) {
          const page = await this.repo.sealedPage(source, after, options.batchSize ?? 200);
          if (page.length === 0) break;
          let rows = page;
          let done = 0;
          for (let attempt = 1; ; attempt++) {
            const planned = plan(box, rows, from, to);
            if (attempt === 1 && pass === 0) report.alreadyNew += planned.alreadyNew;
            const applied = await this.repo.reseal(source, planned.replacements);
            done += applied;
            if (applied === planned.replacements.length || attempt === RETRIES) {
              report.unreadable += planned.unreadable;
              break;
            }
            rows = await this.repo.sealedPage(source, after, page.length);
          }
          report.resealed[source] += done;
          options.onBatch?.(source, done);
          after = page.at(-1)!.key;
        }
      }
      if (total(report.resealed) === before) break;
    }
    return report;
  }
}

function total(counts: Record<SealedSource, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

function plan(box: SecretBox, rows: { key: string; values: Record<string, string | null> }[], from: string, to: string) {
  const replacements: Reseal[] = [];
  let alreadyNew = 0;
  let unreadable = 0;
  for (const row of rows) {
    for (const [column, value] of Object.entries(row.values)) {
      if (value === null) continue;
      if (box.openWith(value, to) !== undefined) {
        alreadyNew++;
        continue;
      }
      const plain = box.openWith(value, from);
      if (plain === undefined) unreadable++;
      else replacements.push({ key: row.key, column, expected: value, value: box.seal(plain, to) });
    }
  }
  return { replacements, alreadyNew, unreadable };
}

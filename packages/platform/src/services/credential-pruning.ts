// The credential part of the worker's maintenance round: deletes authorization codes, access and
// refresh tokens, token families, browser sessions and one-time reveals once nothing can use them
// any more (domain/credential-retention.ts says when that is). Step by step, in batches, with a
// bound per step and round; between batches the event loop gets a turn, so on SQLite, whose
// statements run on the event loop, requests keep being served while a backlog is worked off.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import {
  type CredentialPruneCounts,
  PRUNE_BATCH_SIZE,
  PRUNE_MAX_BATCHES,
  PRUNE_STEPS,
  retentionCutoffs,
  STEP_COUNTS,
} from '../domain/credential-retention.ts';
import type { CredentialPruneRepository } from '../storage/ports/credential-prune.ts';

export type { CredentialPruneCounts };

export interface PruneBounds {
  /** Rows per statement (default PRUNE_BATCH_SIZE). */
  batchSize?: number;
  /** Statements per step in one round (default PRUNE_MAX_BATCHES). */
  maxBatches?: number;
}

export class CredentialPruning {
  private readonly batchSize: number;
  private readonly maxBatches: number;

  constructor(
    private readonly repo: CredentialPruneRepository,
    private readonly lifetimes: Pick<Config, 'accessTokenTtlSeconds' | 'refreshTokenTtlSeconds'>,
    private readonly clock: Clock,
    bounds: PruneBounds = {},
  ) {
    this.batchSize = bounds.batchSize ?? PRUNE_BATCH_SIZE;
    this.maxBatches = bounds.maxBatches ?? PRUNE_MAX_BATCHES;
  }

  /** One round: what each kind of row lost. */
  async prune(): Promise<CredentialPruneCounts> {
    const cutoffs = retentionCutoffs(this.clock(), this.lifetimes);
    const counts: CredentialPruneCounts = {
      codes: 0,
      accessTokens: 0,
      refreshTokens: 0,
      families: 0,
      sessions: 0,
      reveals: 0,
      launchTokens: 0,
    };
    for (const step of PRUNE_STEPS) {
      for (let batch = 0; batch < this.maxBatches; batch++) {
        const deleted = await this.repo.pruneBatch(step, cutoffs, this.batchSize);
        counts[STEP_COUNTS[step]] += deleted;
        if (deleted < this.batchSize) break;
        await nextTurn();
      }
    }
    return counts;
  }
}

// The deletes of the credential maintenance round: which rows each step takes is decided in
// storage by the rules of domain/credential-retention.ts; the service only says which step, up to
// which moments, and how many rows at most.
import type { PruneStep, RetentionCutoffs } from '../../domain/credential-retention.ts';

export interface CredentialPruneRepository {
  /** Deletes at most `limit` rows that `step` covers and that are past their last use; returns how many it deleted. */
  pruneBatch(step: PruneStep, cutoffs: RetentionCutoffs, limit: number): Promise<number>;
}

// How long the credentials of the OAuth flow and of the web pages are kept: each row goes once
// nothing can use it any more, and not before. "Use" includes being looked at by reuse detection:
// - a used authorization code, presented again, revokes the token family it started, so it stays
//   while that family lives (an unused code goes once it has expired);
// - a rotated refresh token, presented again, revokes its family when its successor is in use, so
//   every refresh token of a family stays while the family lives;
// - whether a successor is in use is read from its access token, so the access token issued with a
//   family's newest refresh token stays while the family lives; every other access token goes once
//   it has expired;
//   an online access token (its family holds no refresh token) goes once it has expired;
// - a family has ended once it is revoked, or once every token of it has expired; then its refresh
//   tokens, its used code and the family itself go;
// - a browser session, or a secret waiting to be shown once, goes once it has expired (a logout,
//   or the one showing, deletes it at once);
// - the id of an exchanged launch token goes once the token has expired: from then on its expiry
//   refuses it anyway.
// Every "expired" or "revoked" is counted from a moment CLOCK_SKEW_MARGIN_MS ago, so no node whose
// clock runs a little behind still sees a row as valid that another node has already deleted.
// Pure: the clock and the lifetimes are parameters.

/** How far behind another node's clock may be: nothing goes until it ended at least this long ago. */
export const CLOCK_SKEW_MARGIN_MS = 5 * 60_000;

/** Rows deleted per statement: short statements, so requests are never held up for long. */
export const PRUNE_BATCH_SIZE = 1_000;

/**
 * Statements per kind of row in one maintenance round. A backlog larger than this (a database
 * that was never pruned) is worked off over the following rounds.
 */
export const PRUNE_MAX_BATCHES = 50;

/** The moments the prune compares rows with, for one round. */
export interface RetentionCutoffs {
  /** Codes, access tokens, sessions and reveals that expired before this, and families revoked before this, are over. */
  endedBefore: number;
  /**
   * A family has run out when none of its refresh tokens expires at or after this. Every access
   * token is issued with a refresh token, so when access tokens may live longer than refresh tokens
   * the moment is moved back by the difference.
   */
  familyRefreshExpiredBefore: number;
  /** Families created at or after this cannot have run out yet (their first refresh token still lives). */
  familiesCreatedBefore: number;
  /** A refresh token's lifetime: a refresh token issued after a given moment expires at least this long after it. */
  refreshTtlMs: number;
}

export function retentionCutoffs(
  now: number,
  lifetimes: { accessTokenTtlSeconds: number; refreshTokenTtlSeconds: number },
): RetentionCutoffs {
  const endedBefore = now - CLOCK_SKEW_MARGIN_MS;
  const refreshTtlMs = lifetimes.refreshTokenTtlSeconds * 1000;
  const accessOutlivesRefresh = Math.max(0, lifetimes.accessTokenTtlSeconds * 1000 - refreshTtlMs);
  const familyRefreshExpiredBefore = endedBefore - accessOutlivesRefresh;
  return {
    endedBefore,
    familyRefreshExpiredBefore,
    familiesCreatedBefore: familyRefreshExpiredBefore - refreshTtlMs,
    refreshTtlMs,
  };
}

/**
 * What one round deletes, step by step, in this order: the refresh tokens of ended families come
 * before the families (a family row goes only once none of its refresh tokens is left), and the
 * families before the access tokens and codes whose fate depends on them.
 */
export const PRUNE_STEPS = [
  'revoked-family-refresh-tokens',
  'revoked-families',
  'expired-family-refresh-tokens',
  'expired-families',
  'access-tokens',
  'codes',
  'sessions',
  'reveals',
  'launch-tokens',
] as const;
export type PruneStep = (typeof PRUNE_STEPS)[number];

/** Rows deleted by one round, by kind. */
export interface CredentialPruneCounts {
  codes: number;
  accessTokens: number;
  refreshTokens: number;
  families: number;
  sessions: number;
  reveals: number;
  /** Ids of exchanged launch tokens, kept only until the token expired. */
  launchTokens: number;
}

/** The count each step adds to. */
export const STEP_COUNTS: Record<PruneStep, keyof CredentialPruneCounts> = {
  'revoked-family-refresh-tokens': 'refreshTokens',
  'revoked-families': 'families',
  'expired-family-refresh-tokens': 'refreshTokens',
  'expired-families': 'families',
  'access-tokens': 'accessTokens',
  codes: 'codes',
  sessions: 'sessions',
  reveals: 'reveals',
  'launch-tokens': 'launchTokens',
};

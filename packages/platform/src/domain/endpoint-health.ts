// The figures of an endpoint's health: how an attempt is counted (its outcome, its latency bucket),
// the hour it falls in, and the percentiles read back from a latency histogram. Pure: the worker
// counts with these when it records outcomes, and the dashboard and the CLI read them back.
//
// Latency is kept as a histogram with fixed bucket bounds that double (25 ms … 25.6 s, then 60 s,
// the longest timeout a worker may be given), so counts from every worker and every hour simply
// add up. A percentile is estimated as the upper bound of the bucket that holds it: the true value
// lies above the previous bound and at most at the one reported, so an estimate is never low and at
// most twice the truth (e.g. "p99 ≤ 800 ms" means between 400 and 800 ms).

/** How an attempt ended, as seen from the endpoint. */
export type AttemptOutcomeKind = 'delivered' | 'failed' | 'no_answer' | 'not_sent';

export const OUTCOME_KINDS: readonly AttemptOutcomeKind[] = ['delivered', 'failed', 'no_answer', 'not_sent'];

/** Words for each kind, as the page's legend and the CLI's columns name them. */
export const OUTCOME_LABELS: Record<AttemptOutcomeKind, string> = {
  delivered: 'Delivered (2xx)',
  failed: 'Failed answer',
  no_answer: 'No answer',
  not_sent: 'Not sent',
};

/**
 * delivered: a 2xx answer. failed: any other answer (a redirect, 4xx, 5xx). no_answer: the
 * endpoint never answered (timeout, refused or reset connection, TLS failure). not_sent: the
 * worker refused the address before connecting (it resolves to an address that is not allowed).
 */
export function outcomeKind(attempt: { status: number | null; error: string | null }): AttemptOutcomeKind {
  if (attempt.status !== null) return attempt.status >= 200 && attempt.status < 300 ? 'delivered' : 'failed';
  return attempt.error?.startsWith('refused') ? 'not_sent' : 'no_answer';
}

/** Upper bounds (ms, inclusive) of the latency buckets; a latency above the last is counted in the last. */
export const LATENCY_BOUNDS: readonly number[] = [25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 60000];

/** The bucket of a latency: the first whose bound it does not exceed. */
export function latencyBucket(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS.length; i++) if (ms <= LATENCY_BOUNDS[i]!) return i;
  return LATENCY_BOUNDS.length - 1;
}

/**
 * Whether an attempt's latency goes into the histogram: only answers do. An attempt without an
 * answer is counted apart (no_answer), and its "latency" is the timeout or the moment the
 * connection failed, which says nothing of how fast the endpoint answers.
 */
export function latencyCounted(kind: AttemptOutcomeKind): boolean {
  return kind === 'delivered' || kind === 'failed';
}

export const HOUR_MS = 3_600_000;

/** The start of the UTC hour holding `at`. */
export function hourOf(at: number): number {
  return Math.floor(at / HOUR_MS) * HOUR_MS;
}

/**
 * The estimated `q` quantile (0 < q ≤ 1) of a histogram over `LATENCY_BOUNDS`: the bound of the
 * bucket holding it. Null without any counted latency.
 */
export function latencyQuantile(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((n, c) => n + c, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i]!;
    if (seen >= rank) return LATENCY_BOUNDS[i]!;
  }
  return LATENCY_BOUNDS.at(-1)!;
}

/**
 * The endpoint an address belongs to: its origin (scheme, host, port), never its user, password,
 * path or query, which may carry credentials. An address that does not parse (none should) is
 * named by a placeholder rather than shown.
 */
export function endpointOrigin(address: string): string {
  try {
    return new URL(address).origin;
  } catch {
    return 'an address that does not parse';
  }
}

// Retry policy of webhook deliveries (exponential backoff with jitter): pure functions, no I/O,
// clock and randomness passed in.

const S = 1000;
const H = 3600 * S;

/**
 * Nominal wait before each of the 19 retries: doubling from 15 s to about 4 h, then every 5 h.
 * Total 174,705 s, about 48.5 h. Each real wait is drawn with full jitter (uniform from 0 to twice
 * the nominal wait), so the expected total is the nominal total.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  15 * S,
  30 * S,
  60 * S,
  2 * 60 * S,
  4 * 60 * S,
  8 * 60 * S,
  16 * 60 * S,
  32 * 60 * S,
  64 * 60 * S,
  128 * 60 * S,
  256 * 60 * S,
  5 * H,
  5 * H,
  5 * H,
  5 * H,
  5 * H,
  5 * H,
  5 * H,
  5 * H,
]);

/** A receiver's Retry-After is honoured up to this wait. */
export const RETRY_AFTER_CAP_MS = 6 * H;

/** Full jitter around the nominal wait: uniform in [0, 2 × nominal). `random` returns [0, 1). */
export function jitteredDelay(nominalMs: number, random: () => number): number {
  return Math.floor(nominalMs * 2 * random());
}

/**
 * Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP date. Returns milliseconds from `now`,
 * capped; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number, capMs = RETRY_AFTER_CAP_MS): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const text = v.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, capMs);
}

export type AttemptOutcome =
  | { kind: 'success'; status: number }
  | { kind: 'gone'; status: 410 }
  | { kind: 'failure'; status: number | null; retryAfterMs?: number | undefined };

export function classifyStatus(status: number, retryAfterMs?: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'success', status };
  if (status === 410) return { kind: 'gone', status: 410 };
  return { kind: 'failure', status, retryAfterMs };
}

export type NextState =
  | { status: 'delivered' }
  /** The delivery ends; `disable` says why its subscription is disabled at once (410). */
  | { status: 'dead'; disable?: string }
  | { status: 'pending'; nextAttemptAt: number };

/**
 * What happens after attempt number `attempt` (1 = the first send) ended with `outcome`.
 * `schedule[i]` is the nominal wait before retry i+1; after the last retry the delivery is dead.
 */
export function nextState(
  outcome: AttemptOutcome,
  attempt: number,
  schedule: readonly number[],
  now: number,
  random: () => number,
): NextState {
  if (outcome.kind === 'success') return { status: 'delivered' };
  if (outcome.kind === 'gone') return { status: 'dead', disable: 'the receiver answered 410 Gone' };
  const nominal = schedule[attempt - 1];
  if (nominal === undefined) return { status: 'dead' };
  const wait = Math.max(jitteredDelay(nominal, random), outcome.retryAfterMs ?? 0);
  return { status: 'pending', nextAttemptAt: now + wait };
}

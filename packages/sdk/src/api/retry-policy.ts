// When and how long to wait before retrying a request.
import { randomFloat, type RandomBytes } from '../crypto/random.ts';

/** Retry settings of the Admin API client and the token refresh. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** First backoff ceiling in ms (default 500); doubles each attempt. */
  baseDelayMs?: number;
  /** Largest backoff in ms (default 20000). */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this many seconds is not waited for: the 429 is thrown (default 60). */
  maxRetryAfterSeconds?: number;
  /**
   * Send an `Idempotency-Key` (a random UUID, the same on every retry of one call) with every
   * POST, PUT, PATCH and DELETE, and so retry those writes after network errors and 5xx answers too
   * (default true). The platform answers a repeat with the first response instead of writing
   * again. Turn off only for a platform that ignores the header: writes then go back to being
   * retried after 429 only (PUT and DELETE also after 502/503/504 and network errors).
   */
  idempotencyKeys?: boolean;
}

/** {@link RetryOptions} with every default filled in. */
export type ResolvedRetryOptions = Required<RetryOptions>;

/**
 * The retry defaults: 3 retries, backoff from 500 ms up to 20 s, `Retry-After` honoured up to 60 s,
 * writes sent with an `Idempotency-Key`.
 */
export const DEFAULT_RETRY: ResolvedRetryOptions = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterSeconds: 60,
  idempotencyKeys: true,
};

/** The request header that makes a write safe to send again. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Methods safe to repeat after a 5xx or a lost connection by their definition alone. */
export function isIdempotent(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'PUT' || method === 'DELETE' || method === 'OPTIONS';
}

/** Methods that change something: each gets an `Idempotency-Key` unless turned off. */
export function isWrite(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
}

/**
 * The `Idempotency-Key` a call sends on every one of its attempts: the caller's own (the
 * `idempotencyKey` option, or the header passed in `headers`), else a new random UUID for a write
 * when `enabled`; `undefined` for reads, for `idempotencyKey: false`, and when not enabled.
 *
 * @example
 * ```ts
 * idempotencyKeyFor('POST', {}, true);                                  // 'a3bb189e-8bf9-3888-9912-ace4e6543002' (random)
 * idempotencyKeyFor('POST', { idempotencyKey: 'order-42-refund' }, true); // 'order-42-refund'
 * idempotencyKeyFor('GET', {}, true);                                   // undefined
 * ```
 */
export function idempotencyKeyFor(
  method: string,
  options: { idempotencyKey?: string | false | undefined; headers?: Readonly<Record<string, string>> | undefined },
  enabled: boolean,
): string | undefined {
  if (options.idempotencyKey === false) return undefined;
  if (typeof options.idempotencyKey === 'string') return options.idempotencyKey;
  const header = Object.entries(options.headers ?? {}).find(([name]) => name.toLowerCase() === 'idempotency-key');
  if (header) return header[1];
  return enabled && isWrite(method) ? globalThis.crypto.randomUUID() : undefined;
}

/**
 * Parses `Retry-After` (RFC 9110 section 10.2.3): delay in **seconds**, or an HTTP date. Returns seconds
 * (never negative), or `undefined` when absent or unreadable.
 *
 * @example
 * ```ts
 * parseRetryAfter('2', Date.now());                              // 2 (seconds, not milliseconds)
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.now());  // 0 (a past date)
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - nowMs) / 1000);
}

/** Exponential backoff with full jitter: uniform in [0, min(max, base·2^attempt)). */
export function backoffDelayMs(attempt: number, options: ResolvedRetryOptions, random: RandomBytes): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  return Math.floor(randomFloat(random) * ceiling);
}

/** Sleeps `ms`, ending early with the signal's reason when it aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** `setTimeout`-based {@link Sleep}. */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Whether `headers` has `name`, whatever its case. */
export function hasHeader(headers: Readonly<Record<string, string>> | undefined, name: string): boolean {
  const lower = name.toLowerCase();
  return Object.keys(headers ?? {}).some((h) => h.toLowerCase() === lower);
}

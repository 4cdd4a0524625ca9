// Idempotency keys of Admin API writes: what a well-formed key is, how long a key holds its answer,
// and the fingerprint that tells "the same request again" from "another request with that key".
import { createHash } from 'node:crypto';
import { BadRequestError } from './errors.ts';

/** The request header that carries the key. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** How long a key answers with its first response: retries come within minutes, a day is generous. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/**
 * How long a reservation whose request never finished (its process died) keeps the key. A request
 * that truly runs longer loses its reservation to a retry and has its write rolled back, so this
 * bounds waiting only, never correctness.
 */
export const RESERVATION_LEASE_MS = 60_000;
export const MAX_KEY_LENGTH = 255;

/** Visible ASCII and the space: what fits a header unchanged and reads back the same in every client. */
const KEY_PATTERN = /^[\x20-\x7e]+$/;

/**
 * The key of a request, or undefined when the header is absent. Throws a 400 naming the header for
 * an empty, too long or non-printable key.
 */
export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new BadRequestError(`Send one ${IDEMPOTENCY_HEADER} header, not ${value.length}`);
  if (value.length === 0) throw new BadRequestError(`The ${IDEMPOTENCY_HEADER} header must not be empty`);
  if (value.length > MAX_KEY_LENGTH)
    throw new BadRequestError(`The ${IDEMPOTENCY_HEADER} header must be at most ${MAX_KEY_LENGTH} characters long`);
  if (!KEY_PATTERN.test(value)) throw new BadRequestError(`The ${IDEMPOTENCY_HEADER} header may contain only printable ASCII characters`);
  return value;
}

/** JSON with object keys sorted at every level, so key order never makes two bodies differ. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * SHA-256 (hex) of method, URL, canonical body and If-Match: equal exactly when the requests are the
 * same. A request with another If-Match is another request (it may be answered otherwise); without
 * one the fingerprint is what it was before conditional writes existed.
 */
export function requestFingerprint(method: string, url: string, body: unknown, ifMatch?: string | string[]): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([method.toUpperCase(), url]))
    .update('\n')
    .update(canonicalJson(body));
  if (ifMatch !== undefined) hash.update('\nIf-Match: ').update(Array.isArray(ifMatch) ? ifMatch.join(', ') : ifMatch);
  return hash.digest('hex');
}

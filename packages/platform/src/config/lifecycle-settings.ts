// The settings of a node's life: how it drains and stops, and how long a worker's claim on a
// delivery lasts. Each failure names its flag.
import { ConfigError } from '../domain/errors.ts';
import type { RawConfig, ShutdownConfig } from './types.ts';

export const DEFAULT_DRAIN_DELAY_MS = { production: 5_000, development: 0 } as const;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
export const DEFAULT_CLAIM_LEASE_MS = 30_000;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** A duration such as `500ms`, `5s` or `2m` (a bare number is milliseconds), from `min` to `max` ms. */
export function parseDuration(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const m = /^(\d{1,9})(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new ConfigError(`${flag}: expected a duration such as "500ms", "5s" or "2m", got "${value.slice(0, 40)}"`);
  const ms = Number(m[1]) * UNITS[m[2] ?? 'ms']!;
  if (ms < min || ms > max) throw new ConfigError(`${flag}: must be from ${describe(min)} to ${describe(max)}, got "${value}"`);
  return ms;
}

function describe(ms: number): string {
  if (ms === 0) return '0';
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * `--drain-delay` (0 to 5 minutes) and `--shutdown-timeout` (0 to 10 minutes). A development node
 * has no load balancer to wait for, so it closes its listener at once by default.
 */
export function parseShutdown(raw: Pick<RawConfig, 'drainDelay' | 'shutdownTimeout'>, mode: 'development' | 'production'): ShutdownConfig {
  return {
    drainDelayMs: parseDuration('--drain-delay', raw.drainDelay, DEFAULT_DRAIN_DELAY_MS[mode], 0, 5 * 60_000),
    timeoutMs: parseDuration('--shutdown-timeout', raw.shutdownTimeout, DEFAULT_SHUTDOWN_TIMEOUT_MS, 0, 10 * 60_000),
  };
}

/**
 * `--webhook-claim-lease`, 1 second to 1 hour. Shorter than a second, the heartbeat (a third of the
 * lease) would write to the database several times a second for every busy worker.
 */
export function parseClaimLease(value: string | undefined): number {
  return parseDuration('--webhook-claim-lease', value, DEFAULT_CLAIM_LEASE_MS, 1000, 3_600_000);
}

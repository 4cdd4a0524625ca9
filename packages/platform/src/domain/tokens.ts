// Opaque random tokens with readable prefixes (`sg_at_`, `sg_rt_`...), so that secret scanners can
// recognise leaked ones; only their SHA-256 hashes are stored.
import { createHmac, hash } from 'node:crypto';
import { pooledRandomBytes } from './random.ts';

export const TOKEN_PREFIX = {
  access: 'sg_at_',
  refresh: 'sg_rt_',
  private: 'sg_pt_',
  code: 'sg_ac_',
  clientSecret: 'sg_cs_',
  webhookSecret: 'sg_whs_',
  session: 'sg_ss_',
  resourceServerSecret: 'sg_rss_',
} as const;
export type TokenKind = keyof typeof TOKEN_PREFIX;

/** base64url of 32 random bytes: 256 bits, URL-safe (`A-Za-z0-9-_`), so signed values need no encoding. */
export function newToken(kind: TokenKind, random: (n: number) => Buffer = pooledRandomBytes): string {
  return TOKEN_PREFIX[kind] + random(32).toString('base64url');
}

// One-shot hashing: no Hash object per call (this runs on every Admin API call and every grant).
export function hashToken(token: string): string {
  return hash('sha256', token, 'base64url');
}

/**
 * Token family ids sort by creation time (hex milliseconds, then randomness), so new families are
 * appended to the end of their B-tree instead of landing on a random page.
 */
export function newFamilyId(now: number, random: (n: number) => Buffer = pooledRandomBytes): string {
  return `${Math.floor(now).toString(16).padStart(12, '0')}-${random(10).toString('hex')}`;
}

/** Whether `value` has the shape of a token of `kind` (cheap check before any lookup). */
export function looksLike(kind: TokenKind, value: string): boolean {
  return (
    value.length === TOKEN_PREFIX[kind].length + 43 &&
    value.startsWith(TOKEN_PREFIX[kind]) &&
    /^[A-Za-z0-9_-]+$/.test(value.slice(TOKEN_PREFIX[kind].length))
  );
}

/**
 * The successor pair of a refresh token is derived, not drawn at random: HMAC(master key, old
 * refresh token). A retry of the same old refresh token inside the grace window therefore gets the
 * very same new pair without the platform ever storing a plaintext token.
 */
export function deriveSuccessorPair(derivationKey: Buffer, oldRefreshToken: string): { accessToken: string; refreshToken: string } {
  const mac = (label: string) => createHmac('sha256', derivationKey).update(`${label}\0${oldRefreshToken}`).digest('base64url');
  return { accessToken: TOKEN_PREFIX.access + mac('access'), refreshToken: TOKEN_PREFIX.refresh + mac('refresh') };
}

// Pure decisions of the OAuth token endpoint: whether an authorization code may be redeemed, and
// what to do with a presented refresh token. No I/O; the clock is a parameter.
import { createHash } from 'node:crypto';

export interface CodeRow {
  app_id: number;
  redirect_uri: string;
  code_challenge: string | null;
  expires_at: number;
  used_at: number | null;
}

export type CodeCheck = { ok: true } | { ok: false; reason: string; replay?: boolean };

export function checkCode(
  row: CodeRow | undefined,
  req: { appId: number; redirectUri: string | undefined; codeVerifier: string | undefined; now: number },
): CodeCheck {
  if (!row || row.app_id !== req.appId) return { ok: false, reason: 'authorization code is invalid' };
  if (row.used_at !== null) return { ok: false, reason: 'authorization code was already used', replay: true };
  if (row.expires_at <= req.now) return { ok: false, reason: 'authorization code has expired' };
  if (req.redirectUri !== row.redirect_uri) return { ok: false, reason: 'redirect_uri does not match the authorization request' };
  if (row.code_challenge !== null) {
    if (!req.codeVerifier) return { ok: false, reason: 'code_verifier is required' };
    if (!isPkceVerifier(req.codeVerifier))
      return { ok: false, reason: 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~"' };
    if (pkceChallenge(req.codeVerifier) !== row.code_challenge) return { ok: false, reason: 'code_verifier does not match code_challenge' };
  }
  return { ok: true };
}

// RFC 7636 section 4.1: a verifier is 43 to 128 unreserved characters. A shorter one carries too
// little entropy to stand in for the client secret the flow is protecting.
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether a code_verifier has the form RFC 7636 section 4.1 requires. */
export function isPkceVerifier(verifier: string): boolean {
  return PKCE_VERIFIER.test(verifier);
}

/** RFC 7636 S256: base64url(SHA-256(verifier)). */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export interface RefreshRow {
  app_id: number;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export type RefreshDecision =
  | { action: 'rotate' }
  | { action: 'replay-successor' }
  | { action: 'reject'; reason: string }
  | { action: 'revoke-family'; reason: string };

/**
 * A fresh token rotates. A rotated one presented again inside the grace window gets the same
 * successor (a lost response must not lock the merchant out); later, it is a stolen-token signal
 * and the whole family is revoked.
 */
export function decideRefresh(row: RefreshRow | undefined, req: { appId: number; now: number; graceMs: number }): RefreshDecision {
  if (!row || row.app_id !== req.appId) return { action: 'reject', reason: 'refresh token is invalid' };
  if (row.revoked_at !== null) return { action: 'reject', reason: 'refresh token has been revoked' };
  if (row.rotated_at !== null) {
    return req.now - row.rotated_at <= req.graceMs
      ? { action: 'replay-successor' }
      : { action: 'revoke-family', reason: 'refresh token was already used' };
  }
  if (row.expires_at <= req.now) return { action: 'reject', reason: 'refresh token has expired' };
  return { action: 'rotate' };
}

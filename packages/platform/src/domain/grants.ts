// Pure decisions of the OAuth token endpoint: whether an authorization code may be redeemed, and
// what to do with a presented refresh token. No I/O; the clock is a parameter.
import { createHash } from 'node:crypto';

/** What the rules judge of an authorization code; storage's code row carries these and more. */
export interface CodeFacts {
  app_id: number;
  redirect_uri: string;
  code_challenge: string | null;
  expires_at: number;
  used_at: number | null;
}

export type CodeCheck = { ok: true } | { ok: false; reason: string; replay?: boolean };

export function checkCode(
  row: CodeFacts | undefined,
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

/**
 * The challenge a presented verifier stands for, as a redemption in one step compares it with the
 * code's: none when no verifier was given or it is not of a verifier's form (no code matches then).
 */
export function presentedChallenge(verifier: string | undefined): string | null {
  return verifier !== undefined && isPkceVerifier(verifier) ? pkceChallenge(verifier) : null;
}

/** A code as its redemption in one step judges it: also its scopes and whether it is bound to a merchant. */
export interface RedeemableCode extends CodeFacts {
  scopes: string;
  merchant_id: number | null;
}

/**
 * Whether a code is redeemed in one step, the token endpoint's usual case: checkCode accepts it,
 * it issues the store's own access (a code bound to a merchant issues online access, which the
 * service builds in full), and its installation is active and still holds exactly the code's
 * scopes (any change of the grant sends the code down the full path, which judges it anew). The
 * single statement that redeems such a code states the same rule in SQL; a property test feeds
 * both the same rows and requires the same verdict.
 */
export function redeemsInOneStep(
  row: RedeemableCode | undefined,
  installation: { uninstalled_at: number | null; scopes: string } | undefined,
  req: { appId: number; redirectUri: string | undefined; codeVerifier: string | undefined; now: number },
): boolean {
  if (!row || !checkCode(row, req).ok || row.merchant_id !== null) return false;
  return installation !== undefined && installation.uninstalled_at === null && installation.scopes === row.scopes;
}

/** What the rules judge of a refresh token; storage's refresh row carries these and more. */
export interface RefreshFacts {
  app_id: number;
  expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export type RefreshDecision = { action: 'rotate' } | { action: 'check-successor' } | { action: 'reject'; reason: string };

/**
 * A fresh token rotates. A rotated one may only get its successor pair again, and whether it does
 * depends on that pair (see `decideReplay`). Reuse is judged before expiry, so an old stolen token
 * presented late still ends the family when its successor is in use.
 */
export function decideRefresh(row: RefreshFacts | undefined, req: { appId: number; now: number }): RefreshDecision {
  if (!row || row.app_id !== req.appId) return { action: 'reject', reason: 'refresh token is invalid' };
  if (row.revoked_at !== null) return { action: 'reject', reason: 'refresh token has been revoked' };
  if (row.rotated_at !== null) return { action: 'check-successor' };
  if (row.expires_at <= req.now) return { action: 'reject', reason: 'refresh token has expired' };
  return { action: 'rotate' };
}

/**
 * Whether a refresh is rotated in one step, the token endpoint's usual case: decideRefresh says
 * rotate. The single statement that rotates such a token states the same rule in SQL; a property
 * test feeds both the same rows and requires the same verdict.
 */
export function rotatesInOneStep(row: RefreshFacts | undefined, req: { appId: number; now: number }): boolean {
  return decideRefresh(row, req).action === 'rotate';
}

export interface SuccessorState {
  revoked_at: number | null;
  rotated_at: number | null;
  access_used_at: number | null;
  access_revoked_at: number | null;
}

export type ReplayDecision =
  | { action: 'replay-successor' }
  | { action: 'reject'; reason: string }
  | { action: 'revoke-family'; reason: string };

/**
 * A rotated refresh token presented again. Until either token of its successor pair has been used,
 * the presenter is most likely the app retrying after a lost response, so it gets the same pair
 * again, for as long as the old token itself would have lived. Once the successor is in use, the
 * old token in someone's hands is a stolen-token signal: the whole family is revoked. An access
 * token its holder revoked counts as used (whoever revoked it had received the pair).
 */
export function decideReplay(old: Pick<RefreshFacts, 'expires_at'>, next: SuccessorState | undefined, now: number): ReplayDecision {
  if (!next) return { action: 'reject', reason: 'refresh token is invalid' };
  if (next.revoked_at !== null) return { action: 'reject', reason: 'refresh token has been revoked' };
  if (next.rotated_at !== null || next.access_used_at !== null || next.access_revoked_at !== null)
    return { action: 'revoke-family', reason: 'refresh token was already used' };
  if (old.expires_at <= now) return { action: 'reject', reason: 'refresh token has expired' };
  return { action: 'replay-successor' };
}

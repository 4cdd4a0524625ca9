// The OAuth `state` of the authorization URL, which ties the callback to the authorization this app
// started (CSRF protection). It is self-contained and signed, so the callback can check it even when
// the browser lost or blocked the cookie. Form: `v1.<base64url JSON {n, s, e}>.<base64url HMAC>`.
// Only URL-safe characters, so the platform's `hmac` over it is the same raw or percent-encoded.
import { timingSafeEqualStrings } from '../crypto/constant-time.ts';
import { base64UrlToBytes, bytesToBase64Url, utf8Bytes, utf8Text } from '../crypto/encoding.ts';
import { hmacSha256 } from '../crypto/hmac.ts';
import { StateError } from '../errors.ts';

/** What a state carries. */
export interface StatePayload {
  /** Random nonce, also put in the state cookie. */
  nonce: string;
  /** The shop the authorization was started for. */
  shop: string;
  /** Expiry, unix seconds. */
  expiresAt: number;
}

// Domain separation: a state signature can never be mistaken for any other HMAC made with the secret.
const CONTEXT = 'storegate-oauth-state-v1.';

function toBase64Url(base64: string): string {
  return base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Creates a signed state for {@link StatePayload}.
 *
 * @example
 * ```ts
 * const state = await createState({ nonce: 'n1', shop: 'demo.localhost', expiresAt: 1700000600 }, clientSecret);
 * ```
 */
export async function createState(payload: StatePayload, secret: string): Promise<string> {
  const body = bytesToBase64Url(utf8Bytes(JSON.stringify({ n: payload.nonce, s: payload.shop, e: payload.expiresAt })));
  const signature = toBase64Url(await hmacSha256(secret, [CONTEXT, body], 'base64'));
  return `v1.${body}.${signature}`;
}

/**
 * Checks a state's signature (against any of the secrets) and expiry and returns what it carries.
 * Throws {@link StateError}: `STATE_MISSING`, `STATE_INVALID` (not ours or altered),
 * `STATE_EXPIRED`.
 *
 * @example
 * ```ts
 * const { shop, nonce } = await verifyState(query.state, [clientSecret], Date.now());
 * ```
 */
export async function verifyState(state: string | undefined, secrets: readonly string[], nowMs: number): Promise<StatePayload> {
  if (state === undefined || state === '') throw new StateError('STATE_MISSING', 'the callback carries no state parameter');
  const parts = state.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1') throw new StateError('STATE_INVALID', 'state was not issued by this app (bad format)');
  const body = parts[1] as string;
  const signature = parts[2] as string;
  let valid = false;
  for (const secret of secrets) {
    const expected = toBase64Url(await hmacSha256(secret, [CONTEXT, body], 'base64'));
    if (timingSafeEqualStrings(expected, signature)) valid = true;
  }
  if (!valid) throw new StateError('STATE_INVALID', 'state signature does not match: it was not issued by this app, or was altered');
  const bytes = base64UrlToBytes(body);
  let decoded: { n?: unknown; s?: unknown; e?: unknown };
  try {
    decoded = JSON.parse(utf8Text(bytes ?? new Uint8Array())) as typeof decoded;
  } catch {
    throw new StateError('STATE_INVALID', 'state payload is unreadable');
  }
  if (typeof decoded.n !== 'string' || typeof decoded.s !== 'string' || typeof decoded.e !== 'number') {
    throw new StateError('STATE_INVALID', 'state payload is incomplete');
  }
  if (nowMs / 1000 > decoded.e) {
    throw new StateError('STATE_EXPIRED', `state expired ${Math.round(nowMs / 1000 - decoded.e)} s ago; start the installation again`);
  }
  return { nonce: decoded.n, shop: decoded.s, expiresAt: decoded.e };
}

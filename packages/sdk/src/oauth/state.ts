// The OAuth `state` of the authorization URL, which ties the callback to the authorization this app
// started and to the browser that started it (CSRF protection, including login CSRF: a callback URL
// made in an attacker's browser must not finish in a victim's). It is signed, so the callback can
// trust what it carries, but a signature alone does not say which browser holds it; that proof is
// either the state cookie (its nonce) or, when the app binds the state to its own session instead,
// a keyed digest of that session value. Form: `v1.<base64url JSON {n, s, e, b?}>.<base64url HMAC>`.
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
  /**
   * Digest of the app-session value the state is bound to ({@link bindingDigest}); absent when the
   * state cookie binds it.
   */
  binding?: string | undefined;
}

/** What the callback's browser presents to prove it began the authorization. */
export interface BrowserProof {
  /** The state cookie's value, when the request carried one. */
  cookieNonce: string | undefined;
  /** The app-session value the app passed to the callback. */
  binding: string | undefined;
}

// Domain separation: a state signature can never be mistaken for any other HMAC made with the
// secret, nor a binding digest for a state signature.
const CONTEXT = 'storegate-oauth-state-v1.';
const BINDING_CONTEXT = 'storegate-oauth-state-binding-v1.';

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
  const fields = {
    n: payload.nonce,
    s: payload.shop,
    e: payload.expiresAt,
    ...(payload.binding === undefined ? {} : { b: payload.binding }),
  };
  const body = bytesToBase64Url(utf8Bytes(JSON.stringify(fields)));
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
  let decoded: { n?: unknown; s?: unknown; e?: unknown; b?: unknown };
  try {
    decoded = JSON.parse(utf8Text(bytes ?? new Uint8Array())) as typeof decoded;
  } catch {
    throw new StateError('STATE_INVALID', 'state payload is unreadable');
  }
  if (
    typeof decoded.n !== 'string' ||
    typeof decoded.s !== 'string' ||
    typeof decoded.e !== 'number' ||
    (decoded.b !== undefined && typeof decoded.b !== 'string')
  ) {
    throw new StateError('STATE_INVALID', 'state payload is incomplete');
  }
  if (nowMs / 1000 > decoded.e) {
    throw new StateError('STATE_EXPIRED', `state expired ${Math.round(nowMs / 1000 - decoded.e)} s ago; start the installation again`);
  }
  return { nonce: decoded.n, shop: decoded.s, expiresAt: decoded.e, binding: decoded.b };
}

/**
 * The digest of an app-session value that a bound state carries. Keyed with the client secret, so
 * the state (which travels in URLs and logs) reveals nothing about the value, even a guessable one.
 *
 * @example
 * ```ts
 * const state = await createState({ nonce, shop, expiresAt, binding: await bindingDigest(sessionId, clientSecret) }, clientSecret);
 * ```
 */
export async function bindingDigest(binding: string, secret: string): Promise<string> {
  return toBase64Url(await hmacSha256(secret, [BINDING_CONTEXT, binding], 'base64'));
}

/**
 * Checks that the callback comes from the browser that began the authorization: for a bound state,
 * the same app-session value (against any of the secrets); otherwise the state cookie holding the
 * state's nonce. Throws {@link StateError}: `STATE_MISSING` when the proof is absent,
 * `STATE_MISMATCH` when it belongs to another attempt or session.
 *
 * @example
 * ```ts
 * await requireSameBrowser(await verifyState(query.state, secrets, Date.now()), { cookieNonce, binding: undefined }, secrets);
 * ```
 */
export async function requireSameBrowser(state: StatePayload, proof: BrowserProof, secrets: readonly string[]): Promise<void> {
  if (state.binding !== undefined) {
    if (typeof proof.binding !== 'string' || proof.binding === '')
      throw new StateError(
        'STATE_MISSING',
        'this authorization was bound to an app session; pass the same binding to auth.callback (a state cookie does not replace it)',
      );
    let same = false;
    for (const secret of secrets) {
      if (timingSafeEqualStrings(await bindingDigest(proof.binding, secret), state.binding)) same = true;
    }
    if (!same)
      throw new StateError('STATE_MISMATCH', 'the state is bound to another app session: this browser did not begin this authorization');
    return;
  }
  if (proof.cookieNonce === undefined || proof.cookieNonce === '')
    throw new StateError(
      'STATE_MISSING',
      'the state cookie is missing: this browser did not begin this authorization, or it dropped the cookie (start the installation again)',
    );
  if (!timingSafeEqualStrings(proof.cookieNonce, state.nonce))
    throw new StateError(
      'STATE_MISMATCH',
      'the state cookie belongs to another authorization attempt (another tab or browser started one)',
    );
}

// The launch token (`id_token`) the platform adds to the signed App-URL request when a merchant
// opens an installed app: a compact JWS (HS256, keyed with the client secret) naming the store, the
// app and the merchant. The app may verify it on its own (this module) and exchange it at the
// store's token endpoint for an access token (token exchange), with no redirect of its own.
import { timingSafeEqualStrings } from '../crypto/constant-time.ts';
import { base64UrlToBytes, utf8Text } from '../crypto/encoding.ts';
import { hmacSha256 } from '../crypto/hmac.ts';
import { LaunchTokenError } from '../errors.ts';
import { isValidShop } from '../shop/shop-hostname.ts';
import type { SecretInput } from '../signature/query-signature.ts';

/** The claims of a verified launch token. */
export interface LaunchTokenClaims {
  /** The store's base URL, e.g. `http://demo.localhost:8080`. */
  iss: string;
  /** The same value as `iss`. */
  dest: string;
  /** The app's client id. */
  aud: string;
  /** The merchant's id (a decimal string). */
  sub: string;
  /** Expiry, unix seconds. */
  exp: number;
  /** Not before, unix seconds. */
  nbf: number;
  /** Issued at, unix seconds (absent when the platform sent none). */
  iat: number | undefined;
  /** The token's unique id: the token endpoint accepts each one once. */
  jti: string;
}

/** What {@link verifyLaunchToken} returns. */
export interface VerifiedLaunchToken {
  /** The shop hostname of `iss`, e.g. `demo.localhost`. */
  shop: string;
  /** The merchant who opened the app (`sub`). */
  userId: string;
  claims: LaunchTokenClaims;
}

/** Options of {@link verifyLaunchToken}. */
export interface VerifyLaunchTokenOptions {
  /** The app's client id (`aud` must equal it). */
  clientId: string;
  /** The client secret, or during a rotation the current and previous ones (either verifies). */
  secret: SecretInput;
  /** The platform's store domain: the host of `iss` must be a shop of it. */
  storeDomain: string;
  /** Clock in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /**
   * The base URL the app reaches a shop at (its API origin). When given, `iss` must equal it for
   * the token's shop, so a token can only be exchanged where it was issued.
   */
  expectedIssuer?: (shop: string) => string;
}

/** Clock skew allowed on `exp` and `nbf`, seconds. */
export const LAUNCH_TOKEN_SKEW_SECONDS = 5;

// Large enough for any launch token (about 400 characters), small enough that a forged input costs
// nothing to refuse.
const MAX_TOKEN_LENGTH = 4096;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
// scheme://host[:port], nothing after it: the store's base URL has no path, query or fragment.
const BASE_URL = /^(https?):\/\/([^/?#:@\s]+)(?::(\d{1,5}))?$/;

function malformed(message: string): LaunchTokenError {
  return new LaunchTokenError('LAUNCH_TOKEN_MALFORMED', `launch token is malformed: ${message}`);
}

function decodeJsonSegment(segment: string, name: string): Record<string, unknown> {
  const bytes = base64UrlToBytes(segment);
  if (!bytes) throw malformed(`its ${name} is not base64url`);
  let value: unknown;
  try {
    value = JSON.parse(utf8Text(bytes));
  } catch {
    throw malformed(`its ${name} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw malformed(`its ${name} is not a JSON object`);
  return value as Record<string, unknown>;
}

function requireString(claims: Record<string, unknown>, name: string): string {
  const value = claims[name];
  if (typeof value !== 'string' || value === '')
    throw new LaunchTokenError('LAUNCH_TOKEN_CLAIM_MISSING', `launch token has no "${name}" claim (a non-empty string)`, name);
  if (value.length > 512) throw new LaunchTokenError('LAUNCH_TOKEN_MALFORMED', `launch token claim "${name}" is too long`, name);
  return value;
}

function requireTime(claims: Record<string, unknown>, name: string): number {
  const value = claims[name];
  // A NumericDate may carry fractions of a second (RFC 7519 section 2); the platform sends whole ones.
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new LaunchTokenError('LAUNCH_TOKEN_CLAIM_MISSING', `launch token has no "${name}" claim (unix seconds)`, name);
  return value;
}

/** Checks the header: HS256 exactly (never `none`, never another algorithm), a JWT, no critical extensions. */
function checkHeader(header: Record<string, unknown>): void {
  if (header['alg'] !== 'HS256') {
    const alg = typeof header['alg'] === 'string' ? `"${header['alg'].slice(0, 20)}"` : 'none given';
    throw new LaunchTokenError('LAUNCH_TOKEN_ALGORITHM_REFUSED', `launch token algorithm ${alg} is refused: only HS256 is accepted`);
  }
  if (header['typ'] !== undefined && header['typ'] !== 'JWT') throw malformed('its header "typ" is not "JWT"');
  // An extension the sender marks as critical would change how the token must be read (RFC 7515
  // section 4.1.11); none is defined for launch tokens, so such a token is not one.
  if (header['crit'] !== undefined) throw malformed('its header names critical extensions ("crit"), which are not supported');
}

/** The shop of a store base URL (`scheme://{shop}[:port]`), or undefined when it is not one of `storeDomain`. */
function shopOfBaseUrl(value: string, storeDomain: string): string | undefined {
  const match = BASE_URL.exec(value);
  if (!match) return undefined;
  const host = match[2] as string;
  return isValidShop(host, storeDomain) ? host : undefined;
}

/**
 * Verifies a launch token: the header's `alg` is exactly HS256; the signature, compared in constant
 * time, was made with the client secret (or, during a rotation, any secret given); `aud` is the
 * client id; `iss` and `dest` are the same store base URL, whose host is a shop of `storeDomain`
 * (and equals `expectedIssuer(shop)` when given); `exp` and `nbf` hold within 5 s of skew; `sub`
 * and `jti` are present. Throws {@link LaunchTokenError} with a stable code otherwise. A valid
 * token proves who opened the app; whether it was already exchanged only the token endpoint knows
 * (`jti` is single use there).
 *
 * @example
 * ```ts
 * const { shop, userId, claims } = await verifyLaunchToken(idToken, {
 *   clientId: process.env.CLIENT_ID!,
 *   secret: [process.env.CLIENT_SECRET!],
 *   storeDomain: 'localhost',
 * });
 * ```
 */
export async function verifyLaunchToken(token: unknown, options: VerifyLaunchTokenOptions): Promise<VerifiedLaunchToken> {
  if (typeof token !== 'string' || token === '') throw malformed('no token was given');
  if (token.length > MAX_TOKEN_LENGTH) throw malformed(`it is longer than ${MAX_TOKEN_LENGTH} characters`);
  const segments = token.split('.');
  if (segments.length !== 3) throw malformed('a compact JWS has three dot-separated parts');
  const [headerPart, payloadPart, signaturePart] = segments as [string, string, string];
  if (!SEGMENT.test(headerPart)) throw malformed('each part must be non-empty base64url without padding');
  // The algorithm first, so an unsigned token (`alg: none`, empty signature) is named as such.
  checkHeader(decodeJsonSegment(headerPart, 'header'));
  if (!SEGMENT.test(payloadPart) || !SEGMENT.test(signaturePart)) throw malformed('each part must be non-empty base64url without padding');

  const signingInput = `${headerPart}.${payloadPart}`;
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  let valid = false;
  for (const secret of secrets) {
    // Every secret is tried, so the time taken does not reveal which one matched.
    const pending = hmacSha256(secret, [signingInput], 'base64');
    const digest = (typeof pending === 'string' ? pending : await pending).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    if (timingSafeEqualStrings(digest, signaturePart)) valid = true;
  }
  if (!valid)
    throw new LaunchTokenError(
      'LAUNCH_TOKEN_SIGNATURE_INVALID',
      `launch token signature does not match (checked ${secrets.length} secret${secrets.length === 1 ? '' : 's'}): it was not signed ` +
        `with this app's client secret, or it was changed`,
    );

  const claims = decodeJsonSegment(payloadPart, 'payload');
  const aud = claims['aud'];
  if (aud !== options.clientId) {
    throw new LaunchTokenError(
      aud === undefined ? 'LAUNCH_TOKEN_CLAIM_MISSING' : 'LAUNCH_TOKEN_AUDIENCE_MISMATCH',
      aud === undefined ? 'launch token has no "aud" claim' : 'launch token was issued for another app ("aud" is not this client id)',
      'aud',
    );
  }
  const iss = requireString(claims, 'iss');
  const dest = requireString(claims, 'dest');
  if (iss !== dest) throw new LaunchTokenError('LAUNCH_TOKEN_ISSUER_INVALID', 'launch token "iss" and "dest" differ', 'dest');
  const shop = shopOfBaseUrl(iss, options.storeDomain);
  if (shop === undefined)
    throw new LaunchTokenError(
      'LAUNCH_TOKEN_ISSUER_INVALID',
      `launch token "iss" is not the base URL of a store of ${options.storeDomain} (scheme://{store}.${options.storeDomain}[:port])`,
      'iss',
    );
  const expected = options.expectedIssuer?.(shop);
  if (expected !== undefined && expected.replace(/\/+$/, '') !== iss)
    throw new LaunchTokenError(
      'LAUNCH_TOKEN_ISSUER_INVALID',
      `launch token "iss" is ${iss}, but this app reaches ${shop} at ${expected}`,
      'iss',
    );
  const sub = requireString(claims, 'sub');
  const jti = requireString(claims, 'jti');
  const exp = requireTime(claims, 'exp');
  const nbf = requireTime(claims, 'nbf');
  const iat = claims['iat'] === undefined ? undefined : requireTime(claims, 'iat');
  const nowSeconds = (options.now ?? Date.now)() / 1000;
  // Valid strictly before `exp` and from `nbf` on (RFC 7519 sections 4.1.4, 4.1.5), each widened by the skew.
  if (nowSeconds >= exp + LAUNCH_TOKEN_SKEW_SECONDS)
    throw new LaunchTokenError(
      'LAUNCH_TOKEN_EXPIRED',
      `launch token expired ${Math.round(nowSeconds - exp)} s ago: open the app from the store admin again (check the server clock if ` +
        `this repeats)`,
      'exp',
    );
  if (nowSeconds < nbf - LAUNCH_TOKEN_SKEW_SECONDS)
    throw new LaunchTokenError(
      'LAUNCH_TOKEN_NOT_YET_VALID',
      `launch token is valid only in ${Math.round(nbf - nowSeconds)} s: check the server clock`,
      'nbf',
    );
  return { shop, userId: sub, claims: { iss, dest, aud: options.clientId, sub, exp, nbf, iat, jti } };
}

// Launch tokens: the short-lived signed token the platform hands an app when a merchant opens it,
// which the app's server exchanges at the token endpoint for an access token (RFC 8693) without
// sending the merchant through an authorization redirect. A compact JWS (HS256) keyed with the
// app's client secret, so the app can check it came from the platform before trusting it, and the
// platform can check it was one of its own before exchanging it.
//
// Claims: `iss` and `dest` the store's base URL, `aud` the client_id, `sub` the merchant's id,
// `iat`/`nbf`/`exp` (a minute), and a random `jti` that the exchange records, so each token is
// exchanged once. An app knows its secret and could sign a token itself; that gains it nothing it
// does not have already (its own installation's access), and the bounds below keep such a token
// from costing the platform more than one it issued: at most a minute of life, issued now.
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../domain/clock.ts';
import { InvalidGrant } from '../domain/errors.ts';
import { pooledRandomBytes } from '../domain/random.ts';
import { allSigningSecrets, singleSignatureSecret, type SigningSecrets } from '../domain/signing-secrets.ts';
import type { AppProfile } from '../domain/app-profile.ts';
import type { SealedAppSecrets } from './app-secrets.ts';

/** How long a launch token lives, in seconds. */
export const LAUNCH_TOKEN_TTL_SECONDS = 60;
/** How far apart the clocks of the platform's nodes (or a signer's) may be, in seconds. */
const CLOCK_TOLERANCE_SECONDS = 5;

/** What a verified launch token says. */
export interface LaunchClaims {
  merchantId: number;
  jti: string;
  /** When it expires, unix milliseconds: its id is kept until then. */
  expiresAt: number;
}

type Secrets = (app: AppProfile | SealedAppSecrets) => SigningSecrets;

export class LaunchTokens {
  constructor(
    /** The app's plaintext secrets now (the previous one only during a rotation's overlap). */
    private readonly secrets: Secrets,
    private readonly clock: Clock,
  ) {}

  /**
   * A launch token for the merchant opening the app in the store whose base URL is `issuer`. Signed
   * with the secret that signs the app's other single-signature forms (the previous one during a
   * rotation's overlap), so an app that has not deployed its new secret yet can still check it.
   */
  async issue(app: AppProfile, issuer: string, merchantId: number): Promise<string> {
    const now = Math.floor(this.clock() / 1000);
    return new SignJWT({ dest: issuer })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(app.client_id)
      .setSubject(String(merchantId))
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + LAUNCH_TOKEN_TTL_SECONDS)
      .setJti(pooledRandomBytes(16).toString('base64url'))
      .sign(key(singleSignatureSecret(this.secrets(app))));
  }

  /**
   * Checks a presented launch token for this app and store: its signature under any secret of the
   * app valid now, its claims, and its age. Any failure is `invalid_grant`, with a reason that
   * never repeats the token.
   */
  async verify(app: Pick<AppProfile, 'client_id'> & SealedAppSecrets, issuer: string, token: string): Promise<LaunchClaims> {
    if (token.length > 4096 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token))
      throw new InvalidGrant('subject_token is not a launch token');
    let failure: unknown;
    for (const secret of allSigningSecrets(this.secrets(app))) {
      try {
        const { payload } = await jwtVerify(token, key(secret), {
          algorithms: ['HS256'],
          issuer,
          audience: app.client_id,
          currentDate: new Date(this.clock()),
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          maxTokenAge: LAUNCH_TOKEN_TTL_SECONDS + CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ['sub', 'jti', 'iat', 'nbf', 'exp'],
        });
        return checkClaims(payload, issuer);
      } catch (err) {
        failure = err;
        // Another secret can only help when this one did not match the signature.
        if (!(err instanceof errors.JWSSignatureVerificationFailed)) break;
      }
    }
    throw new InvalidGrant(reason(failure));
  }
}

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

function checkClaims(payload: Record<string, unknown>, issuer: string): LaunchClaims {
  const { sub, jti, exp, iat, dest } = payload;
  if (dest !== issuer) throw new InvalidGrant('launch token is for another store');
  if (typeof sub !== 'string' || !/^[1-9][0-9]{0,15}$/.test(sub)) throw new InvalidGrant('launch token names no merchant');
  if (typeof jti !== 'string' || !/^[A-Za-z0-9_-]{16,64}$/.test(jti)) throw new InvalidGrant('launch token has no valid jti');
  if (typeof exp !== 'number' || typeof iat !== 'number' || exp - iat > LAUNCH_TOKEN_TTL_SECONDS)
    throw new InvalidGrant(`launch token must expire within ${LAUNCH_TOKEN_TTL_SECONDS} seconds of being issued`);
  return { merchantId: Number(sub), jti, expiresAt: exp * 1000 };
}

/** Why a token was refused, in words that name no part of it. */
function reason(err: unknown): string {
  if (err instanceof InvalidGrant) return err.description;
  if (err instanceof errors.JWTExpired) return 'launch token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return 'launch token is for another store';
    if (err.claim === 'aud') return 'launch token is for another app';
    if (err.claim === 'nbf' || err.claim === 'iat') return 'launch token is not valid yet or too old';
    return `launch token has no valid ${err.claim}`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'launch token signature does not match';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'launch token must be signed with HS256';
  return 'subject_token is not a launch token';
}

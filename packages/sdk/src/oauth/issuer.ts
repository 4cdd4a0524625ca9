// RFC 9207: the platform names itself (`iss`) in every authorization response. The app compares it
// with the issuer it expects, the base URL of the shop it sent the merchant to, by simple string
// comparison, before trusting anything else in the response.
import { IssuerError } from '../errors.ts';

/**
 * Throws {@link IssuerError} (`ISSUER_MISMATCH`) when the authorization response carries an `iss`
 * that is not exactly `expectedIssuer`. A response without `iss` passes (platforms that predate
 * RFC 9207 send none); `auth.callback` calls this for you.
 *
 * @example
 * ```ts
 * const params = Object.fromEntries(new URL(req.url, 'http://x').searchParams);
 * checkIssuer(params, 'https://demo.example.com'); // the shop's base URL
 * ```
 */
export function checkIssuer(params: Readonly<Record<string, string | undefined>>, expectedIssuer: string): void {
  const iss = params['iss'];
  if (iss !== undefined && iss !== expectedIssuer) throw new IssuerError(expectedIssuer, iss);
}

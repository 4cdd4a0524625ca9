// Launch tokens for tests, made with node:crypto (not with the SDK code under test): a compact JWS,
// HS256, keyed with the client secret's UTF-8 bytes, with the claims the platform sends.
import { createHmac } from 'node:crypto';

export interface LaunchClaims {
  iss: string;
  dest: string;
  aud: string;
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
}

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A signed launch token for `shop` (base URL `http://{shop}:8080`), issued at `iat` (unix seconds). */
export function launchToken(
  secret: string,
  options: { clientId: string; shop: string; iat: number; sub?: string; jti?: string; claims?: Partial<LaunchClaims> },
): string {
  const base = `http://${options.shop}:8080`;
  const claims: LaunchClaims = {
    iss: base,
    dest: base,
    aud: options.clientId,
    sub: options.sub ?? '1',
    iat: options.iat,
    nbf: options.iat,
    exp: options.iat + 60,
    jti: options.jti ?? 'AAAAAAAAAAAAAAAAAAAAAA',
    ...options.claims,
  };
  const input = `${segment({ alg: 'HS256', typ: 'JWT' })}.${segment(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** The claims of a token, read without checking anything (for fakes). */
export function readClaims(token: string): Partial<LaunchClaims> {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Partial<LaunchClaims>;
  } catch {
    return {};
  }
}

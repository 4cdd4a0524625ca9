// The platform's Ed25519 webhook signing keys: making a key pair, naming it, publishing its public
// half as a JWK (RFC 8037), and the Standard Webhooks `v1a` signature over "id.timestamp.body".
// A key's id is its RFC 7638 thumbprint, so it says which key it is without any registry and two
// keys cannot share one.
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

/** A freshly made key pair: the public key as a JWK's `x`, the private key as PKCS #8 DER (base64) to seal. */
export interface GeneratedSigningKey {
  kid: string;
  publicKey: string;
  privateKeyPkcs8: string;
}

/** The JSON Web Key of a signing key's public half, as the JWKS lists it. */
export interface PublicSigningJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

/** RFC 7638 thumbprint (SHA-256, base64url) of an Ed25519 public key given as its JWK `x`. */
export function ed25519Thumbprint(x: string): string {
  // The required members in lexicographic order, no white space: the RFC's canonical form.
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

export function generateSigningKey(): GeneratedSigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x;
  if (typeof x !== 'string') throw new Error('node:crypto exported an Ed25519 public key without x');
  return {
    kid: ed25519Thumbprint(x),
    publicKey: x,
    privateKeyPkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  };
}

export function publicJwk(kid: string, x: string): PublicSigningJwk {
  return { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' };
}

/** The private key object of a PKCS #8 (base64) key, as `generateSigningKey` gave it. */
export function privateSigningKey(pkcs8: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(pkcs8, 'base64'), format: 'der', type: 'pkcs8' });
}

/** A key that signs: its id and private key. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/** `v1a,<base64 Ed25519 signature of "id.timestamp.body">` */
export function asymmetricSignature(key: KeyObject, webhookId: string, timestampSeconds: number | string, body: string | Buffer): string {
  const signed = Buffer.concat([Buffer.from(`${webhookId}.${timestampSeconds}.`), typeof body === 'string' ? Buffer.from(body) : body]);
  return `v1a,${sign(null, signed, key).toString('base64')}`;
}

/**
 * Where a key stands at `now`: `active` signs alone (outside a rotation: the newest key), `retiring`
 * was replaced by a rotation and still signs, and is still published, until its `retires_at`;
 * `retired` neither signs nor is published (kept only until it is deleted).
 */
export type SigningKeyState = 'active' | 'retiring' | 'retired';

export function signingKeyState(key: { active: boolean; retires_at: number | null }, now: number): SigningKeyState {
  if (key.active) return 'active';
  return key.retires_at !== null && key.retires_at > now ? 'retiring' : 'retired';
}

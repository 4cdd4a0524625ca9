// Password hashes: scrypt (r=8, p=1; N=2^15 unless the operator sets another cost), encoded with
// their parameters, so a hash made at one cost verifies after the cost was raised or lowered.
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt's N when the operator sets none: about 100 ms of one core per hash. */
export const DEFAULT_SCRYPT_N = 1 << 15;
const R = 8;
const P = 1;
const MAXMEM = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, 32, { N: n, r, p, maxmem: MAXMEM }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string, n: number = DEFAULT_SCRYPT_N): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, n, R, P);
  return `scrypt$${n}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, key] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Hashing and checking passwords at one configured cost. */
export class PasswordHasher {
  private dummy: Promise<string> | undefined;

  constructor(readonly scryptN: number = DEFAULT_SCRYPT_N) {}

  hash(password: string): Promise<string> {
    return hashPassword(password, this.scryptN);
  }

  verify(password: string, encoded: string): Promise<boolean> {
    return verifyPassword(password, encoded);
  }

  /** A hash of a random password at this cost, so a login for an unknown email spends as long as a real one. */
  dummyHash(): Promise<string> {
    this.dummy ??= this.hash(randomBytes(16).toString('hex'));
    return this.dummy;
  }
}

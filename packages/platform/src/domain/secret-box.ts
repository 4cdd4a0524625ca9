// Secrets the platform must read back (client secrets, webhook secrets) are stored encrypted with
// AES-256-GCM under a key derived from the master key.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export class SecretBox {
  private readonly key: Buffer;
  /** Key for deterministic token derivation (refresh rotation), separate from the encryption key. */
  readonly derivationKey: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length < 32) throw new Error('master key must be at least 32 bytes');
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'storegate secret-box v1', 32));
    this.derivationKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'storegate token-derivation v1', 32));
  }

  /** An independent key for another purpose (cursor signing, ...), derived from the master key. */
  subkey(label: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `storegate ${label} v1`, 32));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  // A sealed value always opens to the same plaintext, so opened values are kept (bounded): the
  // token endpoint opens the client secret on every request.
  private readonly opened = new Map<string, string>();

  open(sealed: string): string {
    const hit = this.opened.get(sealed);
    if (hit !== undefined) return hit;
    const plain = this.decrypt(sealed);
    if (this.opened.size >= 1000) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(sealed, plain);
    return plain;
  }

  private decrypt(sealed: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

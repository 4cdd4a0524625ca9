// Secrets the platform must read back (client secrets, webhook secrets) are stored encrypted with
// AES-256-GCM under a key derived from the master key. A box may hold a second, previous master
// key while the master key is being changed: it then opens what either key sealed, and seals with
// whichever of the two its caller names.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A short, public name of a master key: a truncated HMAC of a fixed text under the key. The
 * database records it to tell whether a node holds the key its secrets are sealed with; it reveals
 * nothing of the key itself.
 */
export function masterKeyId(masterKey: Buffer): string {
  return createHmac('sha256', masterKey).update('storegate key check').digest('hex').slice(0, 16);
}

interface KeyMaterial {
  id: string;
  encryption: Buffer;
  derivation: Buffer;
}

function material(masterKey: Buffer): KeyMaterial {
  if (masterKey.length < 32) throw new Error('master key must be at least 32 bytes');
  return {
    id: masterKeyId(masterKey),
    encryption: Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'storegate secret-box v1', 32)),
    derivation: Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'storegate token-derivation v1', 32)),
  };
}

export class SecretBox {
  private readonly keys: KeyMaterial[];
  /** Id of the master key this box was given first (`--master-key`). */
  readonly keyId: string;
  /** Key for deterministic token derivation (refresh rotation), separate from the encryption key. */
  readonly derivationKey: Buffer;

  constructor(masterKey: Buffer, previousMasterKey?: Buffer) {
    this.keys = [material(masterKey)];
    if (previousMasterKey !== undefined) {
      const previous = material(previousMasterKey);
      if (previous.id !== this.keys[0]!.id) this.keys.push(previous);
    }
    this.keyId = this.keys[0]!.id;
    this.derivationKey = this.keys[0]!.derivation;
  }

  /** Ids of the master keys this box holds, the first one first. */
  get keyIds(): string[] {
    return this.keys.map((k) => k.id);
  }

  has(keyId: string): boolean {
    return this.keys.some((k) => k.id === keyId);
  }

  /** An independent key for another purpose (cursor signing, ...), derived from a master key. */
  subkey(label: string, keyId = this.keyId): Buffer {
    return Buffer.from(hkdfSync('sha256', this.material(keyId).encryption, Buffer.alloc(0), `storegate ${label} v1`, 32));
  }

  /** The refresh-successor derivation key of one of the box's master keys. */
  derivationKeyOf(keyId: string): Buffer {
    return this.material(keyId).derivation;
  }

  seal(plaintext: string, keyId = this.keyId): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.material(keyId).encryption, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  // A sealed value always opens to the same plaintext, so opened values are kept (bounded): the
  // token endpoint opens the client secret on every request.
  private readonly opened = new Map<string, string>();

  /** Opens a value sealed under any of the box's keys; throws when none opens it. */
  open(sealed: string): string {
    const hit = this.opened.get(sealed);
    if (hit !== undefined) return hit;
    let plain: string | undefined;
    for (const key of this.keys) {
      plain = decrypt(key.encryption, sealed);
      if (plain !== undefined) break;
    }
    if (plain === undefined) throw new Error('sealed secret does not open with this master key');
    if (this.opened.size >= 1000) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(sealed, plain);
    return plain;
  }

  /** The plaintext when `sealed` was sealed under the key `keyId`, else undefined. */
  openWith(sealed: string, keyId: string): string | undefined {
    return decrypt(this.material(keyId).encryption, sealed);
  }

  /** Id of the box's key that opens `sealed`, if any. */
  keyIdOf(sealed: string): string | undefined {
    return this.keys.find((k) => decrypt(k.encryption, sealed) !== undefined)?.id;
  }

  private material(keyId: string): KeyMaterial {
    const key = this.keys.find((k) => k.id === keyId);
    if (!key) throw new Error(`this node does not hold the master key with id ${keyId}`);
    return key;
  }
}

// GCM's tag makes a value sealed under another key fail to open (rather than open to garbage).
function decrypt(key: Buffer, sealed: string): string | undefined {
  if (!sealed.startsWith('v1.')) throw new Error('unknown sealed secret format');
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  if (raw.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

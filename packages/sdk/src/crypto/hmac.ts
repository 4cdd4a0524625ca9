// HMAC-SHA256 with two engines behind one function:
// - node:crypto, found at run time through `process.getBuiltinModule` (Node >= 20.16, Bun, Deno),
//   which is synchronous and several times faster than Web Crypto for small inputs;
// - Web Crypto (`crypto.subtle`) everywhere else (edge runtimes, browsers, older Node).
// The module imports nothing from `node:`, so bundlers for edge runtimes need no configuration and
// no side-effect import picks a runtime.
import { bytesToBase64, bytesToHex, utf8Bytes } from './encoding.ts';

/** Output encodings the signature code needs. */
export type DigestEncoding = 'hex' | 'base64';

/** The piece of node:crypto this module uses. */
interface NodeHmacModule {
  createHmac(
    algorithm: 'sha256',
    key: string,
  ): {
    update(data: string | Uint8Array): { update(data: string | Uint8Array): unknown; digest(encoding: DigestEncoding): string };
    digest(encoding: DigestEncoding): string;
  };
}

/** An HMAC-SHA256 engine: returns the digest directly when it can, a promise otherwise. */
export interface HmacEngine {
  readonly name: 'node' | 'webcrypto';
  sign(key: string, parts: readonly (string | Uint8Array)[], encoding: DigestEncoding): string | Promise<string>;
}

function findNodeCrypto(): NodeHmacModule | undefined {
  try {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const mod = proc?.getBuiltinModule?.('node:crypto') as NodeHmacModule | undefined;
    return typeof mod?.createHmac === 'function' ? mod : undefined;
  } catch {
    return undefined;
  }
}

/** node:crypto engine, or `undefined` when the runtime has none. */
export function nodeHmacEngine(): HmacEngine | undefined {
  const nodeCrypto = findNodeCrypto();
  if (!nodeCrypto) return undefined;
  return {
    name: 'node',
    sign(key, parts, encoding) {
      const hmac = nodeCrypto.createHmac('sha256', key);
      for (const part of parts) hmac.update(part);
      return hmac.digest(encoding);
    },
  };
}

const MAX_CACHED_KEYS = 64;

/** Web Crypto engine; imported keys are cached per secret. */
export function webCryptoHmacEngine(): HmacEngine {
  const keys = new Map<string, Promise<CryptoKey>>();
  const keyFor = (secret: string): Promise<CryptoKey> => {
    let key = keys.get(secret);
    if (!key) {
      if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string);
      key = crypto.subtle.importKey('raw', utf8Bytes(secret) as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
      ]);
      keys.set(secret, key);
    }
    return key;
  };
  return {
    name: 'webcrypto',
    async sign(secret, parts, encoding) {
      const chunks = parts.map((p) => (typeof p === 'string' ? utf8Bytes(p) : p));
      let data: Uint8Array;
      if (chunks.length === 1) {
        data = chunks[0] as Uint8Array;
      } else {
        data = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let offset = 0;
        for (const c of chunks) {
          data.set(c, offset);
          offset += c.length;
        }
      }
      const signature = new Uint8Array(await crypto.subtle.sign('HMAC', await keyFor(secret), data as Uint8Array<ArrayBuffer>));
      return encoding === 'hex' ? bytesToHex(signature) : bytesToBase64(signature);
    },
  };
}

/** The engine the SDK uses: node:crypto when present, Web Crypto otherwise. */
export const hmacEngine: HmacEngine = nodeHmacEngine() ?? webCryptoHmacEngine();

/** HMAC-SHA256 of the concatenated parts, keyed with the UTF-8 bytes of `secret`. */
export function hmacSha256(secret: string, parts: readonly (string | Uint8Array)[], encoding: DigestEncoding): string | Promise<string> {
  return hmacEngine.sign(secret, parts, encoding);
}

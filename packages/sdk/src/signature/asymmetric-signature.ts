// Checking the `v1a` entries of `webhook-signature` (Standard Webhooks, Ed25519 over
// "id.timestamp.body") against public keys. The entries carry no key id; the platform names the key
// of each in `{prefix}Signing-Key-Ids`, which only decides whether a fetched key set is read again:
// every entry is checked against every key the app trusts, so a wrong or forged name gains nothing.
import { base64UrlToBytes, utf8Bytes } from '../crypto/encoding.ts';
import type { WebhookKeySource, WebhookVerificationKey } from './webhook-public-keys.ts';

/** The 64-byte signature of a `v1a,` entry's value, or undefined when it is not one. */
function signatureBytes(value: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]{86}==$/.test(value)) return undefined;
  const bytes = base64UrlToBytes(value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  return bytes?.length === 64 ? bytes : undefined;
}

function signedContent(id: string, timestamp: string, body: string | Uint8Array): Uint8Array {
  const head = utf8Bytes(`${id}.${timestamp}.`);
  const tail = typeof body === 'string' ? utf8Bytes(body) : body;
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

async function anyVerifies(
  keys: readonly WebhookVerificationKey[],
  signatures: readonly Uint8Array[],
  content: Uint8Array,
): Promise<boolean> {
  for (const { key } of keys) {
    for (const signature of signatures) {
      if (await crypto.subtle.verify({ name: 'Ed25519' }, key, signature as Uint8Array<ArrayBuffer>, content as Uint8Array<ArrayBuffer>))
        return true;
    }
  }
  return false;
}

/**
 * Whether some `v1a` value (the part after `v1a,`) is a signature of `id.timestamp.body` by a key
 * of `source`. When none is, a source that fetches its keys is asked once more (`retry`), in case
 * the platform rotated to a key the app has not seen yet.
 */
export async function verifyAsymmetric(input: {
  values: readonly string[];
  id: string;
  timestamp: string;
  body: string | Uint8Array;
  source: WebhookKeySource;
  kids: readonly string[];
}): Promise<{ valid: boolean; keysChecked: number }> {
  const signatures = input.values.map(signatureBytes).filter((s): s is Uint8Array => s !== undefined);
  const content = signedContent(input.id, input.timestamp, input.body);
  let keys = await input.source.keys(input.kids, false);
  if (signatures.length > 0 && (await anyVerifies(keys, signatures, content))) return { valid: true, keysChecked: keys.length };
  const again = await input.source.keys(input.kids, true);
  if (again !== keys) {
    keys = again;
    if (signatures.length > 0 && (await anyVerifies(keys, signatures, content))) return { valid: true, keysChecked: keys.length };
  }
  return { valid: false, keysChecked: keys.length };
}
